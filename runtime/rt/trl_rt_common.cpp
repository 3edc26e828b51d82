// trl_rt_common — the device-independent half of the runtime of generated programs (issue 4):
// the command line (--seed, --log, --bound, --threads, --quiet, --help), the emit reorder buffer
// writing JSON Lines exactly as `trlc --interpret` does (trl_json), the progress line, .npy/.npz
// save and load with messages (trl_npy), the exit summary and trl_fail.  Compiled together with
// one device layer: trl_rt_host.cpp (host compiler) or trl_rt_cuda.cu (nvcc).
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "rt/trl_rt_internal.h"
#include "trl_json.h"
#include "trl_npy.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace trl_rt {

int set_error(trl_ctx *ctx, int status, const std::string &message) {
    if (ctx) ctx->last_error = message;
    return status;
}

}  // namespace trl_rt

using trl_rt::set_error;

namespace {

trl_ctx *g_ctx = nullptr;  // the program's context, for trl_runtime_error
/** Library mode: the context whose trl_lib_call runs on this thread (trl_runtime_error has no
 *  context argument), and what a failure inside it throws to end the call. */
thread_local trl_ctx *t_lib_ctx = nullptr;
struct LibError {
    int status;
};

const char *dtype_name(int dt) {
    switch (dt) {
    case TRL_BOOL: return "bool";
    case TRL_I32: return "i32";
    case TRL_F32: return "f32";
    case TRL_F64: return "f64";
    }
    return "?";
}

bool valid_dtype(int dt) { return dt >= TRL_BOOL && dt <= TRL_F64; }

trl::NpyDType npy_dtype(int dt) { return static_cast<trl::NpyDType>(dt); }

/** Parse a whole decimal integer (optional sign); false on anything else or overflow. */
bool parse_ll(const char *s, long long *v) {
    if (!s || !*s) return false;
    errno = 0;
    char *end = nullptr;
    long long x = std::strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *v = x;
    return true;
}

bool parse_u64(const char *s, uint64_t *v) {
    if (!s || !*s || *s == '-') return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long x = std::strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *v = x;
    return true;
}

std::string shape_text(int rank, const long long *shape) {
    std::string s = "[";
    for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
    return s + "]";
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
    return s + "]";
}

void print_help(const trl_program_info *info, const std::string &prog) {
    std::printf("%s — compiled by trlc from %s (device: %s)\n\n", prog.c_str(), info->source ? info->source : "?",
                trl_rt::device_name());
    std::printf("Usage: %s [options]\n\n", prog.c_str());
    std::printf("Options:\n");
    std::printf("  --seed N         seed of all random streams (default %llu)\n",
                static_cast<unsigned long long>(info->default_seed));
    std::printf("  --log FILE       write emit records (JSON Lines) to FILE instead of stdout\n");
    std::printf("  --bound NAME=V   run with bound NAME = V (only bounds that size no buffer)\n");
    std::printf("  --threads N      use N threads (host only; default: the CPUs allowed; the output\n"
                "                   does not depend on it)\n");
    std::printf("  --quiet          no progress line and no memory summary on stderr (the progress\n"
                "                   line is drawn only when stderr is a terminal)\n");
    std::printf("  --profile FILE.json  time per region of the program (tensor equations, emits, saves)\n"
                "                   and per category (kernels, products, copies, io, waiting); a table\n"
                "                   on stderr, the whole profile in FILE.json\n");
    if (info->checkpoint_loop) {
        size_t kept = 0;
        for (int k = 0; k < info->num_checkpoint_ranges; ++k) kept += info->checkpoint_ranges[2 * k + 1];
        if (!info->checkpoint_ranges) kept = info->arena_bytes;
        std::printf("  --checkpoint FILE  write a checkpoint to FILE (FILE.tmp, then renamed) at the end of\n"
                    "                   an iteration of the outermost loop: about %zu bytes (the part of the\n"
                    "                   %zu-byte arena alive then) and the emit streams' state; needs --log\n"
                    "                   FILE when the program emits\n",
                    kept, info->arena_bytes);
        std::printf("  --checkpoint-every N  every N-th iteration (default: once a minute of wall time)\n");
        std::printf("  --resume         continue from the --checkpoint FILE when it exists (from the start\n"
                    "                   otherwise), the log cut back to it; same seed and bounds\n");
    }
    std::printf("  --help           print this help and exit\n");
    if (info->num_bounds > 0) {
        std::printf("\nBounds:\n");
        for (int k = 0; k < info->num_bounds; ++k) {
            std::string note;
            if (info->bound_runtime && info->bound_runtime[k]) {
                note = "--bound may change it";
                long long lo = info->bound_min ? info->bound_min[k] : 1;
                if (lo > 1) note += "; at least " + std::to_string(lo);
            } else if (info->bound_fixed_why && info->bound_fixed_why[k]) {
                note = std::string("fixed: ") + info->bound_fixed_why[k] + "; recompile with trlc -D";
            } else {
                note = "sizes buffers: fixed; recompile with trlc -D";
            }
            std::printf("  %-16s = %lld  (%s)\n", info->bound_names[k], info->bound_defaults[k], note.c_str());
        }
    }
    if (info->num_streams > 0) {
        std::printf("\nEmit streams:\n");
        for (int s = 0; s < info->num_streams; ++s)
            std::printf("  %-16s %s%lld records%s\n", info->stream_names[s],
                        info->stream_guarded && info->stream_guarded[s] ? "at most " : "",
                        info->stream_points ? info->stream_points[s] : 0LL,
                        info->stream_guarded && info->stream_guarded[s] ? " (emit ... when)" : "");
    }
    std::printf("\nAt exit (unless --quiet) prints the arena size and peak memory on stderr.\n");
}

/** Apply one --bound NAME=V; prints the message and returns false when it is rejected. */
bool apply_bound(trl_ctx *ctx, const std::string &prog, const char *arg) {
    const trl_program_info *info = ctx->info;
    std::string a = arg ? arg : "";
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "%s: error: invalid --bound '%s': expected NAME=VALUE\n", prog.c_str(), a.c_str());
        return false;
    }
    std::string name = a.substr(0, eq), value = a.substr(eq + 1);
    int k = -1;
    for (int i = 0; i < info->num_bounds; ++i)
        if (name == info->bound_names[i]) k = i;
    if (k < 0) {
        std::string known;
        for (int i = 0; i < info->num_bounds; ++i) known += std::string(i ? ", " : "") + info->bound_names[i];
        std::fprintf(stderr, "%s: error: --bound %s: the program has no bound '%s'%s%s\n", prog.c_str(), a.c_str(),
                     name.c_str(), known.empty() ? " (it has none)" : "; its bounds are ", known.c_str());
        return false;
    }
    if (!info->bound_runtime || !info->bound_runtime[k]) {
        const char *why = info->bound_fixed_why ? info->bound_fixed_why[k] : nullptr;
        std::fprintf(stderr,
                     "%s: error: --bound %s: bound '%s' is fixed at compile time in this program "
                     "(%s = %lld%s%s); recompile with trlc -D %s=%s\n",
                     prog.c_str(), a.c_str(), name.c_str(), name.c_str(), info->bound_defaults[k], why ? ": " : "",
                     why ? why : "", name.c_str(), value.c_str());
        return false;
    }
    long long v = 0;
    if (!parse_ll(value.c_str(), &v) || v < 1) {
        std::fprintf(stderr, "%s: error: --bound %s: '%s' is not a positive integer\n", prog.c_str(), a.c_str(),
                     value.c_str());
        return false;
    }
    if (v > 2147483647LL) {  // dims index with i32 (dsl/README.md §4: coordinates are i32)
        std::fprintf(stderr, "%s: error: --bound %s: %lld does not fit a 32-bit integer\n", prog.c_str(), a.c_str(), v);
        return false;
    }
    long long lo = info->bound_min ? info->bound_min[k] : 1;
    if (v < lo) {
        std::fprintf(stderr,
                     "%s: error: --bound %s: the smallest value of '%s' this program was checked "
                     "for is %lld; recompile with trlc -D %s=%s\n",
                     prog.c_str(), a.c_str(), name.c_str(), lo, name.c_str(), value.c_str());
        return false;
    }
    ctx->bounds[k] = v;
    return true;
}

bool stream_guarded(const trl_ctx *ctx, int s) { return ctx->info->stream_guarded && ctx->info->stream_guarded[s]; }

/** "done/total records" over the unguarded streams (their record counts are known); when every
 *  stream is guarded (`emit ... when`), "done/total points" over all streams' domains, since a
 *  guard is evaluated at each point but how many records it lets through is unknown. */
void progress_line(trl_ctx *ctx, bool final) {
    if (!ctx->progress) return;
    double now = trl_now_seconds();
    if (!final && now - ctx->last_progress < 0.1) return;
    ctx->last_progress = now;
    int ns = ctx->info->num_streams;
    bool any_unguarded = false;
    for (int s = 0; s < ns; ++s) any_unguarded = any_unguarded || !stream_guarded(ctx, s);
    long long total = 0, done = 0;
    for (int s = 0; s < ns; ++s) {
        if (any_unguarded && stream_guarded(ctx, s)) continue;
        total += ctx->stream_points[s] > 0 ? ctx->stream_points[s] : 0;
        done += ctx->points_done[s];
    }
    const char *unit = any_unguarded ? "records" : "points";
    double el = now - ctx->start_time, rate = el > 0 ? done / el : 0;
    if (final) {
        std::fprintf(stderr, "\r\033[K");
    } else if (total > 0 && rate > 0) {
        std::fprintf(stderr, "\r\033[K%lld/%lld %s, %.0f/s, ETA %.1f s", done, total, unit, rate,
                     (total - done) / rate);
    } else {
        std::fprintf(stderr, "\r\033[K%lld %s, %.0f/s", done, unit, rate);
    }
    if (!final && !any_unguarded) std::fprintf(stderr, " (%lld records)", ctx->records);
    std::fflush(stderr);
}

void write_line(trl_ctx *ctx, const std::string &line) { std::fwrite(line.data(), 1, line.size(), ctx->out); }

/** Write every pending record that is next in (stream, index) order; with "all", also those
 *  after a gap (at exit: a stream whose point count was overridden ends early). */
void flush_pending(trl_ctx *ctx, bool all) {
    int ns = ctx->info->num_streams;
    while (ctx->cur_stream < ns) {
        int s = ctx->cur_stream;
        std::deque<char> &done = ctx->done[s];
        if (!done.empty() && (done.front() || all)) {  // "all": a gap is passed over
            if (done.front()) {
                auto it = ctx->pending.begin();  // the least (stream, index) held: streams before s are written
                if (it != ctx->pending.end() && it->first.first == s && it->first.second == ctx->next_index[s]) {
                    write_line(ctx, it->second);
                    ctx->pending.erase(it);
                }
            }
            done.pop_front();
            ++ctx->next_index[s];
            continue;
        }
        bool complete = ctx->stream_points[s] >= 0 && ctx->next_index[s] >= ctx->stream_points[s];
        if (complete || all) {
            ++ctx->cur_stream;
            continue;
        }
        break;
    }
}

/** The JSON of one emit field's value (a tuple: a list of its elements); false if malformed. */
bool append_field(std::string &line, const trl_field &fd) {
    if (fd.dtype == TRL_TUPLE) {
        if (fd.rank < 0 || (fd.rank > 0 && !fd.data)) return false;
        const trl_field *elems = static_cast<const trl_field *>(fd.data);
        line += '[';
        for (int k = 0; k < fd.rank; ++k) {
            if (k) line += ',';
            if (!append_field(line, elems[k])) return false;
        }
        line += ']';
        return true;
    }
    if (!valid_dtype(fd.dtype) || fd.rank < 0) return false;
    std::vector<int64_t> shape(fd.shape, fd.shape + fd.rank);
    trl::json_append_array(line, npy_dtype(fd.dtype), fd.rank, shape.data(), fd.data);
    return true;
}

/** TRL_OK when point "index" of "stream" may still be emitted or skipped. */
int check_point(trl_ctx *ctx, int stream, long long index) {
    if (stream < 0 || stream >= ctx->info->num_streams)
        return set_error(ctx, TRL_EINTERNAL, "emit to unknown stream " + std::to_string(stream));
    if (index < ctx->next_index[stream] || (stream < ctx->cur_stream) || trl_rt::is_done(ctx, stream, index))
        return set_error(ctx, TRL_EINTERNAL,
                         "record " + std::to_string(index) + " of stream '" + ctx->info->stream_names[stream] +
                             "' emitted twice");
    return TRL_OK;
}

}  // namespace

void trl_rt::flush_pending(trl_ctx *ctx, bool all) { ::flush_pending(ctx, all); }

void trl_rt::mark_done(trl_ctx *ctx, int stream, long long index, std::string line) {
    std::deque<char> &done = ctx->done[stream];
    const size_t k = static_cast<size_t>(index - ctx->next_index[stream]);
    if (done.size() <= k) done.resize(k + 1, 0);
    done[k] = 1;
    if (!line.empty()) ctx->pending[{stream, index}] = std::move(line);
}

bool trl_rt::is_done(const trl_ctx *ctx, int stream, long long index) {
    const std::deque<char> &done = ctx->done[stream];
    const long long k = index - ctx->next_index[stream];
    return k >= 0 && k < static_cast<long long>(done.size()) && done[static_cast<size_t>(k)];
}

extern "C" {

double trl_now_seconds(void) {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

int trl_exit_code(int status) {
    switch (status) {
    case TRL_OK:
    case TRL_EXIT_SUCCESS: return 0;
    case TRL_EUSAGE:
    case TRL_EIO:
    case TRL_ERUNTIME: return 1;
    default: return 2;
    }
}

int trl_init(trl_ctx **out, const trl_program_info *info, int argc, char **argv) {
    *out = nullptr;
    trl_ctx *ctx = new trl_ctx;
    ctx->info = info;
    std::string prog = argc > 0 && argv[0] ? argv[0] : (info->name ? info->name : "program");
    size_t slash = prog.rfind('/');
    if (slash != std::string::npos) prog = prog.substr(slash + 1);
    ctx->prog = prog;
    ctx->seed = info->default_seed;
    for (int k = 0; k < info->num_bounds; ++k) ctx->bounds.push_back(info->bound_defaults[k]);
    if (info->dist) {  // --distributed: join the ranks before anything prints (trl_dist.cpp)
        int rc = trl_rt::dist_init(ctx, &argc, &argv);
        if (rc != TRL_OK) {
            delete ctx;
            return rc;
        }
    }
    auto usage = [&](const std::string &msg) {
        std::fprintf(stderr, "%s: error: %s (see --help)\n", prog.c_str(), msg.c_str());
        delete ctx;
        return TRL_EUSAGE;
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        std::string opt = a, val;
        bool has_val = false;
        size_t eq = a.find('=');
        if (a.rfind("--", 0) == 0 && eq != std::string::npos && a.rfind("--bound", 0) != 0) {
            opt = a.substr(0, eq);
            val = a.substr(eq + 1);
            has_val = true;
        } else if (a.rfind("--bound=", 0) == 0) {
            opt = "--bound";
            val = a.substr(8);
            has_val = true;
        }
        auto value = [&](std::string *v) {
            if (has_val) {
                *v = val;
                return true;
            }
            if (i + 1 >= argc) return false;
            *v = argv[++i];
            return true;
        };
        // "--opt FILE": a non-empty file name into *dst; else the usage message.
        auto file_value = [&](const char *placeholder, std::string *dst) -> std::string {
            std::string v;
            if (!value(&v) || v.empty()) return opt + " needs a file name: " + opt + " " + placeholder;
            *dst = v;
            return "";
        };
        // "--opt N": an integer in [1, max] into *dst; else the usage message.
        auto count_value = [&](long long max, long long *dst) -> std::string {
            std::string v;
            long long n = 0;
            if (!value(&v)) return opt + " needs a value: " + opt + " N";
            if (!parse_ll(v.c_str(), &n) || n < 1 || n > max) return opt + " '" + v + "' is not a positive integer";
            *dst = n;
            return "";
        };
        if (opt == "--help" || opt == "-h") {
            print_help(info, prog);
            delete ctx;
            return TRL_EXIT_SUCCESS;
        } else if (opt == "--quiet" || opt == "-q") {
            ctx->quiet = true;
        } else if (opt == "--seed") {
            std::string v;
            if (!value(&v)) return usage("--seed needs a value: --seed N");
            if (!parse_u64(v.c_str(), &ctx->seed)) return usage("--seed '" + v + "' is not a non-negative integer");
        } else if (opt == "--log" || opt == "--profile" || opt == "--checkpoint") {
            std::string err =
                file_value(opt == "--profile" ? "FILE.json" : "FILE", opt == "--log"       ? &ctx->log_path
                                                                      : opt == "--profile" ? &ctx->profile_path
                                                                                           : &ctx->checkpoint_path);
            if (!err.empty()) return usage(err);
        } else if (opt == "--threads" || opt == "--checkpoint-every") {
            long long n = 0;
            std::string err = count_value(opt == "--threads" ? 4096 : LLONG_MAX, &n);
            if (!err.empty()) return usage(err);
            if (opt == "--threads")
                ctx->threads = static_cast<int>(n);
            else
                ctx->checkpoint_every = n;
        } else if (opt == "--resume") {
            ctx->resume_requested = true;
        } else if (opt == "--bound") {
            std::string v;
            if (!value(&v)) return usage("--bound needs a value: --bound NAME=VALUE");
            if (!apply_bound(ctx, prog, v.c_str())) {
                delete ctx;
                return TRL_EUSAGE;
            }
        } else {
            return usage("unknown argument '" + a + "'");
        }
    }
    if (ctx->checkpoint_path.empty() && (ctx->resume_requested || ctx->checkpoint_every > 0))
        return usage(std::string(ctx->resume_requested ? "--resume" : "--checkpoint-every") +
                     " needs --checkpoint FILE");
    if (!ctx->checkpoint_path.empty() && !info->checkpoint_loop)
        return usage("--checkpoint: this program has no loop to checkpoint (it runs its statements once)");
    if (!ctx->checkpoint_path.empty() && info->num_streams > 0 && ctx->log_path.empty())
        return usage("--checkpoint needs --log FILE: a resumed run cuts the log back to the checkpoint and "
                     "appends to it (stdout cannot be cut)");
#ifdef _OPENMP
    if (ctx->threads > 0) omp_set_num_threads(ctx->threads);
#endif
    ctx->next_index.assign(info->num_streams, 0);
    ctx->done.assign(info->num_streams, std::deque<char>());
    ctx->points_done.assign(info->num_streams, 0);
    for (int s = 0; s < info->num_streams; ++s)  // --distributed: every rank's records, in (point, rank) order
        ctx->stream_points.push_back(info->stream_points ? info->stream_points[s] * ctx->world : -1);
    ctx->out = stdout;
    ctx->arena_bytes = info->arena_bytes;
    if (ctx->resume_requested) {
        int rc = trl_rt::checkpoint_load(ctx);
        if (rc == TRL_OK) rc = trl_rt::checkpoint_open_log(ctx);
        if (rc != TRL_OK) {
            delete ctx;
            return rc;
        }
    }
    if (!ctx->log_path.empty() && !ctx->resume.valid && ctx->rank == 0) {  // rank 0 writes the log
        ctx->out = std::fopen(ctx->log_path.c_str(), "w");
        if (!ctx->out) {
            std::fprintf(stderr, "%s: error: cannot open log file '%s': %s\n", prog.c_str(), ctx->log_path.c_str(),
                         std::strerror(errno));
            delete ctx;
            return TRL_EIO;
        }
    }
    int rc = trl_rt::device_init(ctx);
    // One allocation: the arena, the error record of kernels, the loaded tensors.
    if (rc == TRL_OK) rc = trl_rt::device_alloc_arena(ctx, info->arena_bytes + TRL_ARENA_TAIL + info->load_bytes);
    ctx->arena_bytes = info->arena_bytes;
    // Resuming: the arena starts as 0xff bytes (NaN floats, -1 integers), so a value the
    // checkpoint should have held but did not (trl_program_info::checkpoint_ranges) shows in
    // the output instead of passing as zeros; the statements before the loop and the restored
    // ranges overwrite everything a correct plan reads.
    if (rc == TRL_OK && ctx->resume.valid && info->arena_bytes > 0) {
        std::vector<unsigned char> poison(info->arena_bytes, 0xff);
        rc = trl_to_device(ctx, ctx->arena, poison.data(), poison.size());
    }
    if (rc != TRL_OK) {
        std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), ctx->last_error.c_str());
        if (ctx->out && ctx->out != stdout) std::fclose(ctx->out);
        trl_rt::device_release(ctx);
        delete ctx;
        return rc;
    }
    ctx->progress = !ctx->quiet && isatty(STDERR_FILENO) && info->num_streams > 0 && ctx->rank == 0;
    g_ctx = ctx;
    ctx->start_time = ctx->last_progress = ctx->last_checkpoint = trl_now_seconds();
    trl_rt::profile_start(ctx);
    *out = ctx;
    return TRL_OK;
}

void trl_set_stream_points(trl_ctx *ctx, int stream, long long points) {
    if (ctx && stream >= 0 && stream < static_cast<int>(ctx->stream_points.size()))
        ctx->stream_points[stream] = points * ctx->world;
}

int trl_finish(trl_ctx *ctx) {
    if (!ctx) return trl_exit_code(TRL_EINTERNAL);
    int status = trl_synchronize(ctx);
    int prof = trl_rt::profile_finish(ctx);
    if (status == TRL_OK) status = prof;
    if (ctx->dist) {
        int d = trl_rt::dist_exchange(ctx);  // the last records of the other ranks
        if (status == TRL_OK) status = d;
    }
    flush_pending(ctx, true);
    progress_line(ctx, true);
    std::fflush(ctx->out);
    bool write_failed = std::ferror(ctx->out) != 0;
    if (ctx->out != stdout && std::fclose(ctx->out) != 0) write_failed = true;
    if (write_failed) {
        std::fprintf(stderr, "%s: error: cannot write the emit records to %s\n", ctx->prog.c_str(),
                     ctx->log_path.empty() ? "stdout" : ctx->log_path.c_str());
        if (status == TRL_OK) status = TRL_EIO;
    }
    if (status != TRL_OK && !ctx->last_error.empty())
        std::fprintf(stderr, "%s: error: %s\n", ctx->prog.c_str(), ctx->last_error.c_str());
    if (!ctx->quiet) {
        struct rusage ru;
        long long peak = 0;
        if (getrusage(RUSAGE_SELF, &ru) == 0) peak = static_cast<long long>(ru.ru_maxrss) * 1024;
        // The run time: from the end of trl_init (arguments read, arena allocated, the ranks
        // joined) to here, so without process start-up (or mpirun's launch and MPI_Init).
        std::fprintf(stderr, "arena: %zu bytes, peak memory: %lld bytes (max resident set), run time: %.3f s\n",
                     ctx->arena_bytes, peak, trl_now_seconds() - ctx->start_time);
    }
    if (ctx->dist) status = trl_rt::dist_finish(ctx, status);
    trl_rt::device_release(ctx);
    delete ctx;
    return trl_exit_code(status);
}

void *trl_arena(trl_ctx *ctx) { return ctx->arena; }

int trl_workspace(trl_ctx *ctx, size_t bytes, void **out) {
    if (bytes > ctx->workspace_bytes || !ctx->workspace) {
        int rc = trl_rt::device_alloc_block(ctx, bytes, &ctx->workspace, &ctx->workspace_bytes, "workspace");
        if (rc != TRL_OK) return rc;
    }
    *out = ctx->workspace;
    return TRL_OK;
}

int trl_frames(trl_ctx *ctx, size_t bytes, void **out) {
    if (bytes > ctx->frames_bytes || !ctx->frames) {
        int rc = trl_rt::device_alloc_block(ctx, bytes, &ctx->frames, &ctx->frames_bytes, "kernel frames");
        if (rc != TRL_OK) return rc;
    }
    *out = ctx->frames;
    return TRL_OK;
}
int trl_stage(trl_ctx *ctx, size_t bytes, void **out) {
    if (bytes > ctx->stage_bytes || !ctx->stage) {
        int rc = trl_rt::device_alloc_block(ctx, bytes, &ctx->stage, &ctx->stage_bytes, "emit stage");
        if (rc != TRL_OK) return rc;
    }
    *out = ctx->stage;
    return TRL_OK;
}
/* trl_gemm's checks, shared by its two forms; the device layer computes the product. */
static int gemm_checked(trl_ctx *ctx, int dtype, bool trans_a, long long m, long long n, long long k, const void *a,
                        const void *b, void *c) {
    trl_rt::ProfScope prof(TRL_PROF_PRODUCTS);
    if (m < 0 || n < 0 || k < 0 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return trl_rt::set_error(ctx, TRL_EINTERNAL, "trl_gemm: bad extents");
    if (dtype != TRL_F32 && dtype != TRL_F64)
        return trl_rt::set_error(ctx, TRL_EINTERNAL, "trl_gemm: dtype must be f32 or f64");
    if (m == 0 || n == 0) return TRL_OK;
    return trl_rt::device_gemm(ctx, dtype, trans_a, m, n, k, a, b, c);
}

int trl_gemm(trl_ctx *ctx, int dtype, long long m, long long n, long long k, const void *a, const void *b, void *c) {
    return gemm_checked(ctx, dtype, false, m, n, k, a, b, c);
}

int trl_gemm_tn(trl_ctx *ctx, int dtype, long long m, long long n, long long k, const void *a, const void *b, void *c) {
    return gemm_checked(ctx, dtype, true, m, n, k, a, b, c);
}

uint64_t trl_seed(trl_ctx *ctx) { return ctx->seed; }

long long trl_bound(trl_ctx *ctx, int k) {
    if (k < 0 || k >= static_cast<int>(ctx->bounds.size())) return 0;
    return ctx->bounds[k];
}

int trl_emit_skip(trl_ctx *ctx, int stream, long long index) {
    // Not timed (--profile): a skipped point writes nothing, and PPO CartPole skips ~500,000
    // (its episode stream has a record only where an episode ends).
    if (ctx->replaying) return TRL_OK;  // resuming: the log holds it (trl_checkpoint.cpp)
    if (ctx->rank > 0) {                // rank 0 writes the log (trl_dist.cpp)
        ++ctx->points_done[stream];
        trl_rt::dist_record(ctx, stream, index, std::string());
        return TRL_OK;
    }
    if (ctx->dist) index = trl_rt::dist_index(ctx, index);
    int rc = check_point(ctx, stream, index);
    if (rc != TRL_OK) return rc;
    ++ctx->points_done[stream];
    trl_rt::mark_done(ctx, stream, index, std::string());  // written as nothing, in its turn
    flush_pending(ctx, false);
    progress_line(ctx, false);
    return TRL_OK;
}

int trl_emit(trl_ctx *ctx, int stream, long long index, const trl_field *fields, int num_fields) {
    trl_rt::ProfScope prof(TRL_PROF_IO);
    if (ctx->replaying) return TRL_OK;  // resuming: the log holds it (trl_checkpoint.cpp)
    if (ctx->dist && ctx->rank == 0) index = trl_rt::dist_index(ctx, index);
    int rc = ctx->rank > 0 ? TRL_OK : check_point(ctx, stream, index);
    if (rc != TRL_OK) return rc;
    std::string line = "{";
    if (ctx->dist) line += "\"rank\":" + std::to_string(ctx->rank) + (num_fields ? "," : "");
    for (int f = 0; f < num_fields; ++f) {
        const trl_field &fd = fields[f];
        if (f) line += ',';
        line += '"';
        line += fd.key;
        line += "\":";
        if (!append_field(line, fd)) return set_error(ctx, TRL_EINTERNAL, "emit field with a bad dtype or rank");
    }
    line += "}\n";
    ++ctx->records;
    ++ctx->points_done[stream];
    if (ctx->rank > 0) {  // rank 0 writes the log (trl_dist.cpp)
        trl_rt::dist_record(ctx, stream, index, line);
        return TRL_OK;
    }
    trl_rt::mark_done(ctx, stream, index, std::move(line));
    flush_pending(ctx, false);
    progress_line(ctx, false);
    return TRL_OK;
}

int trl_save(trl_ctx *ctx, const char *path, const trl_field *arrays, int num_arrays) {
    trl_rt::ProfScope prof(TRL_PROF_IO);
    if (ctx->rank > 0) return TRL_OK;  // --distributed: rank 0 writes the files
    std::vector<trl::NpzMember> members;
    for (int i = 0; i < num_arrays; ++i) {
        const trl_field &f = arrays[i];
        if (!valid_dtype(f.dtype) || f.rank < 0)
            return set_error(ctx, TRL_EINTERNAL, "save of an array with a bad dtype or rank");
        trl::NpyArray a;
        a.dtype = npy_dtype(f.dtype);
        a.shape.assign(f.shape, f.shape + f.rank);
        size_t bytes = static_cast<size_t>(a.numel()) * trl::npy_dtype_size(a.dtype);
        const uint8_t *p = static_cast<const uint8_t *>(f.data);
        a.data.assign(p, p + bytes);
        members.push_back({"arr_" + std::to_string(i), std::move(a)});
    }
    std::string p = path ? path : "", err;
    bool npz = p.size() >= 4 && p.compare(p.size() - 4, 4, ".npz") == 0;
    bool ok;
    if (npz || members.size() != 1) {
        ok = trl::npz_save(p, members, &err);
    } else {
        ok = trl::npy_save(p, members[0].second, &err);
    }
    if (!ok) return set_error(ctx, TRL_EIO, "cannot save " + err);
    return TRL_OK;
}

int trl_load(trl_ctx *ctx, const char *path, int dtype, int rank, const long long *shape, void *dst) {
    std::string p = path ? path : "", err;
    if (!valid_dtype(dtype) || rank < 0) return set_error(ctx, TRL_EINTERNAL, "load with a bad dtype or rank");
    trl::NpyArray a;
    if (!trl::npy_load(p, &a, &err)) return set_error(ctx, TRL_EIO, "cannot load " + err);
    std::vector<int64_t> want(shape, shape + rank);
    if (a.dtype != npy_dtype(dtype) || a.shape != want)
        return set_error(ctx, TRL_EIO,
                         "cannot load " + p + ": it holds " + trl::npy_dtype_name(a.dtype) + shape_text(a.shape) +
                             ", the program expects " + dtype_name(dtype) + shape_text(rank, shape));
    std::memcpy(dst, a.data.data(), a.data.size());
    return TRL_OK;
}

int trl_load_arrays(trl_ctx *ctx, const char *path, const char *name, int tuple, const trl_field *arrays,
                    int num_arrays) {
    std::string p = path ? path : "", who = name ? name : "the tensor", err;
    if (ctx && !ctx->load_dir.empty() && !p.empty() && p[0] != '/')  // library mode: under its directory
        p = ctx->load_dir + (ctx->load_dir.back() == '/' ? "" : "/") + p;
    std::vector<std::pair<std::string, trl::NpyArray>> got;
    bool npz = p.size() >= 4 && p.compare(p.size() - 4, 4, ".npz") == 0;
    if (npz) {
        std::vector<trl::NpzMember> ms;
        if (!trl::npz_load(p, &ms, &err)) return set_error(ctx, TRL_EIO, "cannot load " + err);
        if (static_cast<int>(ms.size()) != num_arrays)
            return set_error(ctx, TRL_EIO,
                             p + " holds " + std::to_string(ms.size()) + " arrays, but " + who +
                                 (tuple ? " is declared a tuple of " + std::to_string(num_arrays) : " is one array"));
        for (auto &m : ms) got.push_back({p + "[" + m.first + "]", std::move(m.second)});
    } else {
        trl::NpyArray a;
        if (!trl::npy_load(p, &a, &err)) return set_error(ctx, TRL_EIO, "cannot load " + err);
        if (num_arrays != 1)
            return set_error(ctx, TRL_EIO, p + " holds one array, but " + who + " is declared a tuple");
        got.push_back({p, std::move(a)});
    }
    for (int i = 0; i < num_arrays; ++i) {
        const trl_field &f = arrays[i];
        const trl::NpyArray &a = got[i].second;
        std::vector<int64_t> want(f.shape, f.shape + f.rank);
        if (!valid_dtype(f.dtype) || a.dtype != npy_dtype(f.dtype) || a.shape != want)
            return set_error(ctx, TRL_EIO,
                             got[i].first + " holds " + trl::npy_dtype_name(a.dtype) +
                                 (a.shape.empty() ? "" : shape_text(a.shape)) + ", but " + who +
                                 (num_arrays > 1 ? " element " + std::to_string(i) : "") + " is declared " +
                                 (valid_dtype(f.dtype) ? dtype_name(f.dtype) : "?") +
                                 (f.rank == 0 ? "" : shape_text(f.rank, f.shape)));
        std::memcpy(const_cast<void *>(f.data), a.data.data(), a.data.size());
    }
    return TRL_OK;
}

void trl_runtime_error(const char *message) {
    if (t_lib_ctx) {  // library mode: the call ends with the error (trl_lib_call)
        t_lib_ctx->last_error = message ? message : "run-time error";
        throw LibError{TRL_ERUNTIME};
    }
    trl_ctx *ctx = g_ctx;
    if (ctx && ctx->out) {
        flush_pending(ctx, false);
        std::fflush(ctx->out);
    }
    std::fprintf(stderr, "%s\n", message ? message : "run-time error");
    std::exit(1);
}

void *trl_scratch_alloc(unsigned long long bytes) {
    void *p = std::malloc(bytes ? bytes : 1);
    if (!p) {
        std::fprintf(stderr, "out of host memory: a kernel's %llu-byte scratch array\n", bytes);
        std::exit(1);
    }
    return p;
}

void trl_fail(trl_ctx *ctx, int status, const char *call, const char *file, int line) {
    if (ctx && ctx->library) {  // library mode: the call ends with the status (trl_lib_call)
        if (ctx->last_error.empty()) ctx->last_error = std::string(call ? call : "?") + " failed";
        throw LibError{status == TRL_OK ? TRL_EINTERNAL : status};
    }
    const char *prog = ctx ? ctx->prog.c_str() : "program";
    std::string msg = ctx && !ctx->last_error.empty() ? ctx->last_error : "failed";
    std::fprintf(stderr, "%s: error: %s\n", prog, msg.c_str());
    if (status != TRL_EIO && status != TRL_EUSAGE)
        std::fprintf(stderr, "%s: note: in %s at %s:%d\n", prog, call ? call : "?", file ? file : "?", line);
    if (ctx && ctx->out) std::fflush(ctx->out);
    std::exit(trl_exit_code(status == TRL_OK ? TRL_EINTERNAL : status));
}

// ---- library mode (trl_rt.h)

int trl_lib_init(trl_ctx **out, const trl_program_info *info, const char *dir, char *err, size_t errlen) {
    *out = nullptr;
    trl_ctx *ctx = new (std::nothrow) trl_ctx;
    auto fail = [&](int status, const std::string &msg) {
        if (err && errlen > 0) std::snprintf(err, errlen, "%s", msg.c_str());
        if (ctx) {
            trl_rt::device_release(ctx);
            delete ctx;
        }
        return status;
    };
    if (!ctx) return fail(TRL_EDEVICE, "out of host memory for the context");
    ctx->info = info;
    ctx->prog = info->name ? info->name : "library";
    ctx->library = true;
    ctx->quiet = true;
    ctx->threads = 1;  // kernels on the calling thread: no team is started
    ctx->seed = info->default_seed;
    for (int k = 0; k < info->num_bounds; ++k) ctx->bounds.push_back(info->bound_defaults[k]);
    ctx->load_dir = dir ? dir : "";
    ctx->arena_bytes = info->arena_bytes;
    int rc = trl_rt::device_init(ctx);
    if (rc == TRL_OK) rc = trl_rt::device_alloc_arena(ctx, info->arena_bytes + TRL_ARENA_TAIL + info->load_bytes);
    if (rc != TRL_OK) return fail(rc, ctx->last_error);
    *out = ctx;
    return TRL_OK;
}

int trl_lib_call(trl_ctx *ctx, void (*fn)(void *arg), void *arg) {
    trl_ctx *outer = t_lib_ctx;
    t_lib_ctx = ctx;
    ctx->last_error.clear();
    int status = TRL_OK;
    try {
        fn(arg);
    } catch (const LibError &e) {
        status = e.status;
    } catch (const std::bad_alloc &) {
        ctx->last_error = "out of host memory";
        status = TRL_EDEVICE;
    } catch (const std::exception &e) {
        ctx->last_error = e.what();
        status = TRL_EINTERNAL;
    }
    t_lib_ctx = outer;
    return status;
}

int trl_lib_fail(trl_ctx *ctx, int status, const char *message) {
    if (ctx) ctx->last_error = message ? message : "";
    return status;
}

const char *trl_lib_error(const trl_ctx *ctx) { return ctx ? ctx->last_error.c_str() : "no context"; }

void trl_lib_release(trl_ctx *ctx) {
    if (!ctx) return;
    trl_rt::device_release(ctx);
    delete ctx;
}

}  // extern "C"
