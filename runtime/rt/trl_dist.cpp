// trl_dist — the rank side of data-parallel runs (trlc --distributed; runtime/trl_rt.h,
// dsl/README.md §7.12): the ordered mean of gradients over the ranks, the records of every
// rank reaching rank 0's log, the parameter digest compared at exit.  Messages go through the
// process-group layer the program was linked with (trl_program_info::dist, e.g. trl_dist_mpi);
// without one every function is the one-rank case.
//
// Records: a rank > 0 keeps each record (or skipped point) with its index in the merged stream
// (index · ranks + rank, trl_rt::dist_index) in an outbox; at every kExchangeEvery-th
// trl_allreduce_mean (the same calls on every rank) and at exit every rank sends its outbox to
// rank 0 (the layer's gather), whose reorder buffer writes them in (stream, point, rank) order —
// the order of `trlc --interpret --ranks N`.  When they are sent changes only when rank 0
// writes them, never their order.
// Outbox entry: i32 stream, i64 merged index, u32 length, then the line's bytes; length 0 is a
// run of skipped points instead, followed by its u32 count: the points at local indices index,
// index + 1, ... (merged: a stride of ranks).  One entry per run, not per skip: PPO CartPole's
// episode stream skips ~500,000 points per rank, mostly in runs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rt/trl_rt_internal.h"
#include "trl_ops.h"
#include "trl_random.h"
#include "trl_rt.h"

namespace trl_rt {

namespace {

// PPO CartPole averages 16 gradients per iteration: sending the records with each cost two more
// collectives per update (the sizes, then the blocks).
constexpr long long kExchangeEvery = 64;

int layer_error(trl_ctx *ctx, const char *what) {
    const char *msg = ctx->dist && ctx->dist->error ? ctx->dist->error() : "";
    return set_error(ctx, TRL_EDEVICE, std::string(what) + " (" + ctx->dist->name + "): " + msg);
}

template <class T>
void put(std::string &out, T v) {
    out.append(reinterpret_cast<const char *>(&v), sizeof v);
}

template <class T>
bool get(const char *&p, const char *end, T *v) {
    if (static_cast<size_t>(end - p) < sizeof *v) return false;
    std::memcpy(v, p, sizeof *v);
    p += sizeof *v;
    return true;
}

}  // namespace

int dist_init(trl_ctx *ctx, int *argc, char ***argv) {
    const trl_dist_layer *d = ctx->info->dist;
    char err[512] = "";
    int rank = 0, size = 1, local = 0;
    if (d->init(argc, argv, &rank, &size, &local, err, sizeof err) != 0) {
        std::fprintf(stderr, "%s: error: cannot join the ranks (%s): %s\n", ctx->prog.c_str(), d->name, err);
        return TRL_EDEVICE;
    }
    ctx->dist = d;
    ctx->rank = rank;
    ctx->world = size;
    ctx->local_rank = local;
    // Every rank must run the same program: ranks started from different builds would average
    // unrelated gradients.
    std::vector<unsigned long long> hashes(size);
    unsigned long long mine = ctx->info->program_hash;
    if (d->allgather(&mine, sizeof mine, hashes.data()) != 0) {
        std::fprintf(stderr, "%s: error: rank %d: %s\n", ctx->prog.c_str(), rank, d->error());
        d->abort(2);
    }
    std::string differ;
    for (int r = 0; r < size; ++r)
        if (hashes[r] != hashes[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
    if (!differ.empty()) {
        if (rank == 0)
            std::fprintf(stderr,
                         "%s: error: the ranks run different programs: rank %s (program hash) differs from "
                         "rank 0's; start every rank from the same build\n",
                         ctx->prog.c_str(), differ.c_str());
        d->finalize();
        return TRL_EUSAGE;
    }
    return TRL_OK;
}

void dist_record(trl_ctx *ctx, int stream, long long index, const std::string &line) {
    constexpr size_t kCountAt = sizeof(int32_t) + sizeof(int64_t) + sizeof(uint32_t);  // in a run's entry
    if (line.empty() && ctx->outbox_run != std::string::npos && ctx->outbox_run_next == index) {
        int32_t run_stream = 0;
        uint32_t count = 0;
        std::memcpy(&run_stream, ctx->outbox.data() + ctx->outbox_run, sizeof run_stream);
        std::memcpy(&count, ctx->outbox.data() + ctx->outbox_run + kCountAt, sizeof count);
        if (run_stream == stream && count < UINT32_MAX) {  // extend the run
            ++count;
            std::memcpy(&ctx->outbox[ctx->outbox_run + kCountAt], &count, sizeof count);
            ++ctx->outbox_run_next;
            return;
        }
    }
    ctx->outbox_run = line.empty() ? ctx->outbox.size() : std::string::npos;
    ctx->outbox_run_next = index + 1;
    put<int32_t>(ctx->outbox, stream);
    put<int64_t>(ctx->outbox, dist_index(ctx, index));
    put<uint32_t>(ctx->outbox, static_cast<uint32_t>(line.size()));
    if (line.empty())
        put<uint32_t>(ctx->outbox, 1);
    else
        ctx->outbox += line;
}

int dist_exchange(trl_ctx *ctx) {
    if (!ctx->dist || ctx->world == 1) return TRL_OK;
    std::vector<unsigned long long> sizes(ctx->world, 0);
    void *recv = nullptr;
    if (ctx->dist->gather(ctx->outbox.data(), ctx->outbox.size(), sizes.data(), &recv) != 0)
        return layer_error(ctx, "sending the records to rank 0");
    ctx->outbox.clear();
    ctx->outbox_run = std::string::npos;
    if (ctx->rank != 0) return TRL_OK;
    unsigned long long total = 0;
    for (unsigned long long s : sizes) total += s;
    const char *p = static_cast<const char *>(recv), *end = p + total;
    while (p < end) {
        int32_t stream = 0;
        int64_t index = 0;
        uint32_t len = 0, count = 1;
        bool ok = get(p, end, &stream) && get(p, end, &index) && get(p, end, &len) &&
                  (len > 0 || get(p, end, &count)) && static_cast<size_t>(end - p) >= len && stream >= 0 &&
                  stream < ctx->info->num_streams;
        for (uint32_t k = 0; ok && k < count; ++k, index += ctx->world) {
            ok = index >= ctx->next_index[stream] && !is_done(ctx, stream, index);
            if (ok) mark_done(ctx, stream, index, std::string(p, len));
        }
        if (!ok) {
            std::free(recv);
            return set_error(ctx, TRL_EINTERNAL, "a malformed record block from another rank");
        }
        if (len) ++ctx->records;
        ctx->points_done[stream] += count;
        p += len;
    }
    std::free(recv);
    flush_pending(ctx, false);
    return TRL_OK;
}

int dist_finish(trl_ctx *ctx, int status) {
    const trl_dist_layer *d = ctx->dist;
    if (status != TRL_OK) d->abort(trl_exit_code(status));  // the others wait in a collective
    struct {
        unsigned long long digest, has;
    } mine = {ctx->digest, ctx->has_digest ? 1ull : 0ull};
    std::vector<decltype(mine)> all(ctx->world);
    if (d->allgather(&mine, sizeof mine, all.data()) != 0) {
        std::fprintf(stderr, "%s: error: rank %d: comparing the parameters: %s\n", ctx->prog.c_str(), ctx->rank,
                     d->error());
        d->abort(2);
    }
    std::string differ;
    for (int r = 1; r < ctx->world; ++r)
        if (all[r].digest != all[0].digest) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
    if (!differ.empty()) {
        std::fprintf(stderr,
                     "%s: error: rank %d: the parameters differ across the ranks: rank %s (digest %016llx) "
                     "against rank 0 (digest %016llx)\n",
                     ctx->prog.c_str(), ctx->rank, differ.c_str(), all[ctx->rank == 0 ? 1 : ctx->rank].digest,
                     all[0].digest);
        status = TRL_ERUNTIME;
    } else if (ctx->rank == 0 && mine.has && !ctx->quiet) {
        std::fprintf(stderr, "parameters identical across %d ranks (digest %016llx)\n", ctx->world, mine.digest);
    }
    d->finalize();
    return status;
}

}  // namespace trl_rt

extern "C" {

int trl_rank(trl_ctx *ctx) { return ctx ? ctx->rank : 0; }
int trl_world_size(trl_ctx *ctx) { return ctx ? ctx->world : 1; }

int trl_allreduce_mean(trl_ctx *ctx, int dtype, int count, void *const *data, const long long *n) {
    if (!ctx->dist || ctx->world == 1) return TRL_OK;  // the mean over one rank is its value
    trl_rt::ProfScope prof(TRL_PROF_COMMUNICATION);
    if (trl_prof_on && !ctx->dist->allreduce_mean_device) {
        // Profiled only: meet the other ranks first (a one-byte allgather), so the profile tells
        // the time this rank waits for the slowest one ("waiting") from the time the gradient
        // takes to move ("comm").  One more small collective per mean.
        std::vector<char> met(ctx->world);
        const char here = 0;
        const long long t0 = trl_prof_now();
        if (ctx->dist->allgather(&here, 1, met.data()) != 0)
            return trl_rt::layer_error(ctx, "meeting the other ranks before a gradient mean");
        trl_prof_waited(trl_prof_now() - t0);
    }
    int rc = TRL_OK;
    if (++ctx->allreduces % trl_rt::kExchangeEvery == 0 && (rc = trl_rt::dist_exchange(ctx)) != TRL_OK) return rc;
    if (dtype != TRL_F32 && dtype != TRL_F64)
        return trl_rt::set_error(ctx, TRL_EINTERNAL, "trl_allreduce_mean of a dtype other than f32, f64");
    if (ctx->dist->allreduce_mean_device && !trl_rt::device_memory_is_host()) {  // NCCL: on the device
        for (int j = 0; j < count; ++j)
            if (ctx->dist->allreduce_mean_device(data[j], n[j], dtype, nullptr) != 0)
                return trl_rt::layer_error(ctx, "averaging a gradient over the ranks");
        return TRL_OK;
    }
    const size_t esz = dtype == TRL_F32 ? 4 : 8;
    size_t total = 0;
    for (int j = 0; j < count; ++j) total += static_cast<size_t>(n[j]);
    // One segment in host memory (the host build's arena; PPO's 12 gradient leaves are one
    // segment): the layer sends it from the arena and the mean goes back into it.  Otherwise
    // the leaves are packed into ctx->dist_send.  The buffers live in ctx: no allocation per
    // update.
    const bool in_place = count == 1 && trl_rt::device_memory_is_host();
    if (!in_place && ctx->dist_send.size() < total * esz) ctx->dist_send.resize(total * esz);
    if (ctx->dist_recv.size() < total * esz * ctx->world) ctx->dist_recv.resize(total * esz * ctx->world);
    char *send = in_place ? static_cast<char *>(data[0]) : ctx->dist_send.data();
    char *recv = ctx->dist_recv.data();
    if (!in_place)
        for (int j = 0, off = 0; j < count; off += static_cast<int>(n[j] * esz), ++j)
            if ((rc = trl_to_host(ctx, send + off, data[j], n[j] * esz)) != TRL_OK) return rc;
    if (ctx->dist->allgather(send, total * esz, recv) != 0)
        return trl_rt::layer_error(ctx, "averaging a gradient over the ranks");
    if (dtype == TRL_F32)
        trl::rank_mean(reinterpret_cast<const float *>(recv), static_cast<long long>(total), ctx->world,
                       reinterpret_cast<float *>(send));
    else
        trl::rank_mean(reinterpret_cast<const double *>(recv), static_cast<long long>(total), ctx->world,
                       reinterpret_cast<double *>(send));
    if (!in_place)
        for (int j = 0, off = 0; j < count; off += static_cast<int>(n[j] * esz), ++j)
            if ((rc = trl_to_device(ctx, data[j], send + off, n[j] * esz)) != TRL_OK) return rc;
    return TRL_OK;
}

int trl_digest(trl_ctx *ctx, const trl_field *arrays, int num_arrays) {
    for (int a = 0; a < num_arrays; ++a) {
        const trl_field &f = arrays[a];
        long long n = 1;
        for (int d = 0; d < f.rank; ++d) n *= f.shape[d];
        size_t esz = f.dtype == TRL_BOOL ? 1 : f.dtype == TRL_F64 ? 8 : 4;
        ctx->digest = trl::fnv1a64(ctx->digest, f.data, static_cast<size_t>(n) * esz);
    }
    ctx->has_digest = true;
    return TRL_OK;
}

}  // extern "C"
