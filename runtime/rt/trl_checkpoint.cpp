// trl_checkpoint — checkpoint and resume of a generated program (issue 15 point 1):
// `prog --checkpoint FILE [--checkpoint-every N] [--resume]`.
//
// What a checkpoint holds: everything the rest of the run reads at the end of an iteration of
// the program's outermost loop (the one codegen marks with trl_checkpoint_iteration): the live
// part of the arena (the memory plan's one allocation: every tensor value a later statement
// reads lives there; trl_program_info::checkpoint_ranges are the buffers written in the loop
// and read after the end of their iteration, compiler/memory/checkpoint_live.cpp),
// the loop value reached, the emit streams' state (the next record of each stream, the records
// still held by the reorder buffer, the log's length), and what must match to continue: the
// program's hash (computed by trlc over the generated source), the seed and every bound.  The
// random streams are counter-based (Philox keyed by statement and point), so no generator
// state exists; loaded tensors are read again at start, the workspace holds nothing across
// statements.
//
// File format (little-endian, native layout of the fixed-size fields):
//   "TRLCKPT\3", u64 program hash, u64 seed, u32 bounds, i64 bound values...,
//   i64 iteration value, u64 iterations done, u64 arena bytes, u32 ranges, per range
//   { u64 offset, u64 bytes }, u64 host region bytes (trl_checkpoint_host; 0: none),
//   u32 streams, per stream { i64 next index, i64 points done, i64 points }, i32 current stream,
//   i64 records, u64 log length, u64 held records, per record { i32 stream, i64 index, u64 n,
//   n bytes }, the ranges' bytes one after the other, the host region's bytes, u64 FNV-1a 64 of
//   every byte before it.
// Written to FILE.tmp, fsync'd, renamed over FILE (a crash leaves the previous checkpoint), after
// the log was flushed and fsync'd (so the log holds at least "log length" bytes).
//
// Data-parallel runs (--distributed, dsl/README.md §7.12): the ranks checkpoint together when
// rank 0's is due (its flag allgathered each iteration), after every rank's records reached rank
// 0 (dist_exchange); each rank's checkpoint above (its own arena: environments, rollout; rank
// 0's also the log's state) reaches rank 0 by the layer's gather, which writes one file:
//   "TRLCKPTR", u32 ranks, per rank { u64 parameter digest so far, u8 has digest, u64 n, the
//   rank's checkpoint (n bytes, with its own checksum) }, u64 FNV-1a 64 of every byte before it.
// Every rank reads the file (one machine, or a shared file system) and takes its part; the ranks
// then compare what they found (allgather), so that they all resume the same iteration or all
// start over, and a file of another number of ranks is refused.
//
// Resume: trl_init reads and checks FILE (a checksum, the hash, seed and bounds; a mismatch or a
// truncated file is an error naming the file, exit 1), opens the log without truncating it and
// cuts it to the checkpoint's length.  run_program runs what comes before the outermost loop
// again (its emits are dropped: they are in the log already), then trl_checkpoint_resume copies
// the ranges back and the loop continues after the checkpoint's iteration.  The records of the
// resumed run follow the log's kept bytes exactly as in an uninterrupted run.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rt/trl_rt_internal.h"

namespace {

const char kCkptMagic[8] = {'T', 'R', 'L', 'C', 'K', 'P', 'T', '\3'};
const char kCkptRanksMagic[8] = {'T', 'R', 'L', 'C', 'K', 'P', 'T', 'R'};  // a data-parallel run's

/** The files' checksum: FNV-1a 64 (trl_random.h, the parameter digest's hash too). */
uint64_t ckpt_hash(const char *p, size_t n) { return trl::fnv1a64(trl::kFnv64Offset, p, n); }

/** Whether "data" ends in the checksum of the bytes before it. */
bool ckpt_checksum_ok(const std::string &data) {
    if (data.size() < 8) return false;
    uint64_t sum;
    std::memcpy(&sum, data.data() + data.size() - 8, 8);
    return ckpt_hash(data.data(), data.size() - 8) == sum;
}

struct CkptWriter {
    std::string bytes;
    template <class T>
    void put(T v) {
        bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
    }
    void put_bytes(const void *p, size_t n) { bytes.append(static_cast<const char *>(p), n); }
};

struct CkptReader {
    const std::string &bytes;
    size_t at = 0;
    bool ok = true;
    template <class T>
    T get() {
        T v{};
        if (at + sizeof v > bytes.size()) {
            ok = false;
            return v;
        }
        std::memcpy(&v, bytes.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    std::string get_bytes(uint64_t n) {
        if (n > bytes.size() - at) {
            ok = false;
            return {};
        }
        std::string s = bytes.substr(at, n);
        at += n;
        return s;
    }
};

bool ckpt_read_file(const std::string &path, std::string *out) {
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
    bool ok = !std::ferror(f);
    std::fclose(f);
    return ok;
}

/** The arena intervals a checkpoint holds: the program's, or the whole arena. */
std::vector<std::pair<uint64_t, uint64_t>> ckpt_ranges(const trl_ctx *ctx) {
    std::vector<std::pair<uint64_t, uint64_t>> r;
    const trl_program_info *info = ctx->info;
    if (info->checkpoint_ranges)
        for (int k = 0; k < info->num_checkpoint_ranges; ++k)
            r.push_back({static_cast<uint64_t>(info->checkpoint_ranges[2 * k]),
                         static_cast<uint64_t>(info->checkpoint_ranges[2 * k + 1])});
    else
        r.push_back({0, ctx->arena_bytes});
    return r;
}

// A rank > 0 of a data-parallel run keeps its message while the ranks read the checkpoint: the
// ranks usually fail alike (one file), and then rank 0's message says it once (checkpoint_load).
std::string g_rank_message;

int ckpt_fail(trl_ctx *ctx, const std::string &message) {
    if (ctx->dist && ctx->rank > 0 && ctx->reading_checkpoint)
        g_rank_message = message;
    else
        std::fprintf(stderr, "%s: error: %s\n", ctx->prog.c_str(), message.c_str());
    return TRL_EIO;
}

}  // namespace

namespace trl_rt {

namespace {

/** One process's checkpoint "data" (the format above, checksum included) into ctx->resume;
 *  "what" names it in messages. */
int checkpoint_parse(trl_ctx *ctx, const std::string &data, const std::string &what) {
    if (data.size() < sizeof kCkptMagic + 8 || std::memcmp(data.data(), kCkptMagic, sizeof kCkptMagic) != 0)
        return ckpt_fail(ctx, what + " is not a checkpoint of a trlc program (or of an older format)");
    if (!ckpt_checksum_ok(data))
        return ckpt_fail(ctx,
                         what + " is truncated or corrupted (its checksum does not match); delete it to start over");
    CkptReader r{data, sizeof kCkptMagic};
    const uint64_t hash = r.get<uint64_t>(), seed = r.get<uint64_t>();
    if (hash != ctx->info->program_hash)
        return ckpt_fail(ctx, what + " was written by another program (or another build of it): its hash " +
                                  std::to_string(hash) + " is not this program's " +
                                  std::to_string(ctx->info->program_hash));
    if (seed != ctx->seed)
        return ckpt_fail(ctx, what + " was written with --seed " + std::to_string(seed) + ", not " +
                                  std::to_string(ctx->seed));
    const uint32_t nb = r.get<uint32_t>();
    if (nb != ctx->bounds.size()) return ckpt_fail(ctx, what + " does not match this program's bounds");
    for (uint32_t k = 0; k < nb; ++k) {
        long long v = r.get<long long>();
        if (v != ctx->bounds[k])
            return ckpt_fail(ctx, what + " was written with bound " + ctx->info->bound_names[k] + " = " +
                                      std::to_string(v) + ", not " + std::to_string(ctx->bounds[k]));
    }
    Resume &res = ctx->resume;
    res.iteration = r.get<long long>();
    res.iterations_done = r.get<uint64_t>();
    const uint64_t arena = r.get<uint64_t>();
    if (arena != ctx->arena_bytes) return ckpt_fail(ctx, what + " holds an arena of another size");
    const auto ranges = ckpt_ranges(ctx);
    uint64_t kept = 0;
    bool same = r.get<uint32_t>() == ranges.size();
    for (size_t k = 0; k < ranges.size() && same; ++k) {
        same = r.get<uint64_t>() == ranges[k].first && r.get<uint64_t>() == ranges[k].second;
        kept += ranges[k].second;
    }
    if (!same) return ckpt_fail(ctx, what + " holds other parts of the arena than this program checkpoints");
    const uint64_t host = r.get<uint64_t>();  // checked by trl_checkpoint_resume, once registered
    const uint32_t ns = r.get<uint32_t>();
    if (ns != static_cast<uint32_t>(ctx->info->num_streams)) return ckpt_fail(ctx, what + " has other emit streams");
    res.next_index.resize(ns);
    res.points_done.resize(ns);
    res.stream_points.resize(ns);
    for (uint32_t s = 0; s < ns; ++s) {
        res.next_index[s] = r.get<long long>();
        res.points_done[s] = r.get<long long>();
        res.stream_points[s] = r.get<long long>();
    }
    res.cur_stream = r.get<int>();
    res.records = r.get<long long>();
    res.log_bytes = r.get<uint64_t>();
    const uint64_t held = r.get<uint64_t>();
    for (uint64_t i = 0; i < held && r.ok; ++i) {
        int s = r.get<int>();
        long long index = r.get<long long>();
        uint64_t n = r.get<uint64_t>();
        res.pending[{s, index}] = r.get_bytes(n);
    }
    res.arena = r.get_bytes(kept);
    res.host = r.get_bytes(host);
    if (!r.ok || r.at != data.size() - 8) return ckpt_fail(ctx, what + " is malformed");
    res.valid = true;
    ctx->replaying = true;  // until run_program reaches the loop: its emits are in the log already
    return TRL_OK;
}

/** A data-parallel run's file "data" (kCkptRanksMagic): this rank's part into ctx->resume. */
int checkpoint_parse_ranks(trl_ctx *ctx, const std::string &data, const std::string &what) {
    if (data.size() < sizeof kCkptRanksMagic + 12 || !ckpt_checksum_ok(data))
        return ckpt_fail(ctx,
                         what + " is truncated or corrupted (its checksum does not match); delete it to start over");
    CkptReader r{data, sizeof kCkptRanksMagic};
    const uint32_t ranks = r.get<uint32_t>();
    if (ranks != static_cast<uint32_t>(ctx->world))
        return ckpt_fail(ctx, what + " was written by " + std::to_string(ranks) + " ranks, and this run has " +
                                  std::to_string(ctx->world) + ": resume it with mpirun -np " + std::to_string(ranks));
    for (uint32_t k = 0; k < ranks && r.ok; ++k) {
        const uint64_t digest = r.get<uint64_t>();
        const uint8_t has = r.get<uint8_t>();
        const std::string part = r.get_bytes(r.get<uint64_t>());
        if (!r.ok) break;
        if (k != static_cast<uint32_t>(ctx->rank)) continue;
        ctx->digest = digest;
        ctx->has_digest = has != 0;
        int rc = checkpoint_parse(ctx, part, what + " (rank " + std::to_string(k) + "'s part)");
        if (rc != TRL_OK) return rc;
    }
    if (!r.ok || r.at != data.size() - 8) return ckpt_fail(ctx, what + " is malformed");
    return TRL_OK;
}

/** checkpoint_load's file reading and parsing on this rank (no file: nothing to resume). */
int checkpoint_read(trl_ctx *ctx) {
    const std::string &path = ctx->checkpoint_path;
    std::string data;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return TRL_OK;  // nothing to resume: start from the beginning
        return ckpt_fail(ctx, "cannot read the checkpoint '" + path + "': " + std::strerror(errno));
    }
    if (!ckpt_read_file(path, &data))
        return ckpt_fail(ctx, "cannot read the checkpoint '" + path + "': " + std::strerror(errno));
    const std::string what = "the checkpoint '" + path + "'";
    const bool ranks_file =
        data.size() >= sizeof kCkptRanksMagic && std::memcmp(data.data(), kCkptRanksMagic, sizeof kCkptRanksMagic) == 0;
    if (ranks_file && !ctx->dist)
        return ckpt_fail(ctx, what + " was written by a data-parallel run (--distributed): resume it with that "
                                     "program under mpirun");
    if (!ranks_file && ctx->dist &&
        !(data.size() < sizeof kCkptMagic || std::memcmp(data.data(), kCkptMagic, sizeof kCkptMagic) != 0))
        return ckpt_fail(ctx, what + " was written by one process, not by the ranks of a data-parallel run");
    return ranks_file ? checkpoint_parse_ranks(ctx, data, what) : checkpoint_parse(ctx, data, what);
}

}  // namespace

int checkpoint_load(trl_ctx *ctx) {
    ctx->reading_checkpoint = true;
    int rc = checkpoint_read(ctx);
    ctx->reading_checkpoint = false;
    if (!ctx->dist || ctx->world == 1) return rc;
    // The ranks compare what they found: all resume the same iteration, or all start over.
    struct State {
        long long iteration;
        int status;  // 0 nothing to resume, 1 resumed, 2 failed (the message: below)
        int pad;
    } mine{ctx->resume.valid ? ctx->resume.iteration : -1, rc != TRL_OK ? 2 : ctx->resume.valid ? 1 : 0, 0};
    std::vector<State> all(ctx->world);
    if (ctx->dist->allgather(&mine, sizeof mine, all.data()) != 0) {
        std::fprintf(stderr, "%s: error: rank %d: %s\n", ctx->prog.c_str(), ctx->rank, ctx->dist->error());
        ctx->dist->abort(2);
    }
    std::string failed, differ;
    for (int r = 0; r < ctx->world; ++r) {
        if (all[r].status == 2) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
        if (all[r].status != all[0].status || all[r].iteration != all[0].iteration)
            differ += (differ.empty() ? "" : ", ") + std::to_string(r);
    }
    if (failed.empty() && differ.empty()) return TRL_OK;
    if (rc != TRL_OK && ctx->rank > 0 && all[0].status != 2)  // rank 0 read it: this rank's own failure
        std::fprintf(stderr, "%s: error: rank %d: %s\n", ctx->prog.c_str(), ctx->rank, g_rank_message.c_str());
    if (ctx->rank == 0 && failed.empty())
        ckpt_fail(ctx, "the ranks found different checkpoints at '" + ctx->checkpoint_path + "' (rank " + differ +
                           " differs from rank 0): every rank must read the same file (one machine, or a shared "
                           "file system)");
    else if (ctx->rank == 0 && rc == TRL_OK)
        ckpt_fail(ctx, "rank " + failed + " could not resume from the checkpoint '" + ctx->checkpoint_path + "'");
    ctx->dist->finalize();
    return TRL_EIO;
}

int checkpoint_open_log(trl_ctx *ctx) {
    if (!ctx->resume.valid || ctx->log_path.empty() || ctx->rank != 0) return TRL_OK;  // rank 0 writes the log
    FILE *f = std::fopen(ctx->log_path.c_str(), "r+");
    if (!f) return ckpt_fail(ctx, "cannot reopen the log '" + ctx->log_path + "' to resume: " + std::strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || static_cast<uint64_t>(st.st_size) < ctx->resume.log_bytes) {
        std::fclose(f);
        return ckpt_fail(ctx, "the log '" + ctx->log_path + "' is shorter than the checkpoint '" +
                                  ctx->checkpoint_path + "' says it was (" + std::to_string(ctx->resume.log_bytes) +
                                  " bytes): it is not the log of that run");
    }
    if (ftruncate(fileno(f), static_cast<off_t>(ctx->resume.log_bytes)) != 0 || std::fseek(f, 0, SEEK_END) != 0) {
        std::fclose(f);
        return ckpt_fail(ctx,
                         "cannot cut the log '" + ctx->log_path + "' back to the checkpoint: " + std::strerror(errno));
    }
    ctx->out = f;
    return TRL_OK;
}

}  // namespace trl_rt

extern "C" {

int trl_checkpoint_resume(trl_ctx *ctx, long long *first, long long step) {
    ctx->replaying = false;
    trl_rt::Resume &res = ctx->resume;
    if (!res.valid) return TRL_OK;
    size_t at = 0;
    for (const auto &[offset, bytes] : ckpt_ranges(ctx)) {
        int rc = trl_to_device(ctx, static_cast<char *>(ctx->arena) + offset, res.arena.data() + at, bytes);
        if (rc != TRL_OK) return rc;
        at += bytes;
    }
    if (res.host.size() != ctx->checkpoint_host_bytes)
        return ckpt_fail(ctx, "the checkpoint '" + ctx->checkpoint_path + "' holds a host arena of " +
                                  std::to_string(res.host.size()) + " bytes, this program's has " +
                                  std::to_string(ctx->checkpoint_host_bytes));
    if (!res.host.empty()) std::memcpy(ctx->checkpoint_host, res.host.data(), res.host.size());
    ctx->next_index = res.next_index;
    ctx->points_done = res.points_done;
    ctx->stream_points = res.stream_points;
    ctx->cur_stream = res.cur_stream;
    ctx->records = res.records;
    ctx->pending.clear();
    for (std::deque<char> &done : ctx->done) done.clear();
    for (auto &[point, line] : res.pending) {
        const auto [s, index] = point;
        if (s < 0 || s >= ctx->info->num_streams || index < ctx->next_index[s] || trl_rt::is_done(ctx, s, index))
            return ckpt_fail(ctx, "the checkpoint '" + ctx->checkpoint_path + "' holds a record it has written");
        trl_rt::mark_done(ctx, s, index, std::move(line));
    }
    res.pending.clear();
    ctx->iterations_done = res.iterations_done;
    *first = res.iteration + step;
    if (!ctx->quiet && ctx->rank == 0)
        std::fprintf(stderr, "%s: resuming from the checkpoint '%s' after iteration %lld of the outermost loop\n",
                     ctx->prog.c_str(), ctx->checkpoint_path.c_str(), res.iteration);
    res = trl_rt::Resume{};  // the arena copy is not needed any more
    return TRL_OK;
}

int trl_checkpoint_host(trl_ctx *ctx, void *host, size_t bytes) {
    ctx->checkpoint_host = static_cast<char *>(host);
    ctx->checkpoint_host_bytes = bytes;
    return TRL_OK;
}

int trl_checkpoint_iteration(trl_ctx *ctx, long long iteration) {
    if (trl_prof_on) trl_rt::profile_count_iteration();
    if (ctx->checkpoint_path.empty()) return TRL_OK;
    ++ctx->iterations_done;
    const double now = trl_now_seconds();
    bool due = ctx->checkpoint_every > 0 ? ctx->iterations_done % ctx->checkpoint_every == 0
                                         : now - ctx->last_checkpoint >= 60.0;
    if (ctx->dist && ctx->world > 1) {  // rank 0's clock decides for every rank
        std::vector<char> all(ctx->world);
        const char mine = due;
        if (ctx->dist->allgather(&mine, 1, all.data()) != 0)
            return trl_rt::set_error(ctx, TRL_EDEVICE, std::string("agreeing on a checkpoint: ") + ctx->dist->error());
        due = all[0] != 0;
    }
    if (!due) return TRL_OK;
    ctx->last_checkpoint = now;
    int rc = trl_synchronize(ctx);
    if (rc != TRL_OK) return rc;
    // Every rank's records reach rank 0 first: its log and reorder buffer then hold them all.
    if (ctx->dist && (rc = trl_rt::dist_exchange(ctx)) != TRL_OK) return rc;
    // The log first: what the checkpoint says was written must be on disk before it.
    if (std::fflush(ctx->out) != 0)
        return trl_rt::set_error(ctx, TRL_EIO, "cannot write the emit records before a checkpoint");
    uint64_t log_bytes = 0;
    if (ctx->out != stdout) {
        long at = std::ftell(ctx->out);
        if (at < 0 || fsync(fileno(ctx->out)) != 0)
            return trl_rt::set_error(ctx, TRL_EIO, "cannot sync the log '" + ctx->log_path + "' for a checkpoint");
        log_bytes = static_cast<uint64_t>(at);
    }
    CkptWriter w;
    w.put_bytes(kCkptMagic, sizeof kCkptMagic);
    w.put<uint64_t>(ctx->info->program_hash);
    w.put<uint64_t>(ctx->seed);
    w.put<uint32_t>(static_cast<uint32_t>(ctx->bounds.size()));
    for (long long b : ctx->bounds) w.put<long long>(b);
    w.put<long long>(iteration);
    w.put<uint64_t>(ctx->iterations_done);
    w.put<uint64_t>(ctx->arena_bytes);
    const auto ranges = ckpt_ranges(ctx);
    w.put<uint32_t>(static_cast<uint32_t>(ranges.size()));
    for (const auto &[offset, bytes] : ranges) {
        w.put<uint64_t>(offset);
        w.put<uint64_t>(bytes);
    }
    w.put<uint64_t>(ctx->checkpoint_host_bytes);
    w.put<uint32_t>(static_cast<uint32_t>(ctx->info->num_streams));
    for (int s = 0; s < ctx->info->num_streams; ++s) {
        w.put<long long>(ctx->next_index[s]);
        w.put<long long>(ctx->points_done[s]);
        w.put<long long>(ctx->stream_points[s]);
    }
    w.put<int>(ctx->cur_stream);
    w.put<long long>(ctx->records);
    w.put<uint64_t>(log_bytes);
    // The done points not yet written, a skipped one as an empty line (reorder buffer: trl_ctx).
    uint64_t held = 0;
    for (const std::deque<char> &done : ctx->done)
        for (char d : done) held += d ? 1 : 0;
    w.put<uint64_t>(held);
    for (int s = 0; s < ctx->info->num_streams; ++s)
        for (size_t k = 0; k < ctx->done[s].size(); ++k) {
            if (!ctx->done[s][k]) continue;
            const long long index = ctx->next_index[s] + static_cast<long long>(k);
            auto it = ctx->pending.find({s, index});
            const std::string empty, &line = it == ctx->pending.end() ? empty : it->second;
            w.put<int>(s);
            w.put<long long>(index);
            w.put<uint64_t>(line.size());
            w.put_bytes(line.data(), line.size());
        }
    for (const auto &[offset, bytes] : ranges) {
        const size_t at = w.bytes.size();
        w.bytes.resize(at + bytes);
        rc = trl_to_host(ctx, &w.bytes[at], static_cast<const char *>(ctx->arena) + offset, bytes);
        if (rc != TRL_OK) return rc;
    }
    if (ctx->checkpoint_host_bytes) w.put_bytes(ctx->checkpoint_host, ctx->checkpoint_host_bytes);
    w.put<uint64_t>(ckpt_hash(w.bytes.data(), w.bytes.size()));
    if (ctx->dist) {  // one file of every rank's part, written by rank 0
        CkptWriter part;
        part.put<uint64_t>(ctx->digest);
        part.put<uint8_t>(ctx->has_digest ? 1 : 0);
        part.put<uint64_t>(w.bytes.size());
        part.put_bytes(w.bytes.data(), w.bytes.size());
        std::vector<unsigned long long> sizes(ctx->world, 0);
        void *recv = nullptr;
        if (ctx->dist->gather(part.bytes.data(), part.bytes.size(), sizes.data(), &recv) != 0)
            return trl_rt::set_error(ctx, TRL_EDEVICE,
                                     std::string("sending a checkpoint to rank 0: ") + ctx->dist->error());
        if (ctx->rank != 0) return TRL_OK;
        unsigned long long total = 0;
        for (unsigned long long n : sizes) total += n;
        w = CkptWriter{};
        w.put_bytes(kCkptRanksMagic, sizeof kCkptRanksMagic);
        w.put<uint32_t>(static_cast<uint32_t>(ctx->world));
        w.put_bytes(recv, total);
        std::free(recv);
        w.put<uint64_t>(ckpt_hash(w.bytes.data(), w.bytes.size()));
    }
    const std::string tmp = ctx->checkpoint_path + ".tmp";
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return trl_rt::set_error(ctx, TRL_EIO, "cannot write the checkpoint '" + tmp + "': " + std::strerror(errno));
    size_t done = 0;
    while (done < w.bytes.size()) {
        ssize_t n = write(fd, w.bytes.data() + done, w.bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return trl_rt::set_error(ctx, TRL_EIO,
                                     "cannot write the checkpoint '" + tmp + "': " + std::strerror(errno));
        }
        done += static_cast<size_t>(n);
    }
    if (fsync(fd) != 0 || close(fd) != 0 || std::rename(tmp.c_str(), ctx->checkpoint_path.c_str()) != 0)
        return trl_rt::set_error(ctx, TRL_EIO,
                                 "cannot write the checkpoint '" + ctx->checkpoint_path + "': " + std::strerror(errno));
    return TRL_OK;
}

}  // extern "C"
