#pragma once
// trl_rt_internal — what the device-independent part of the runtime (trl_rt_common.cpp: command
// line, emit reorder buffer and JSON Lines, save/load, finish) shares with a device layer
// (trl_rt_host.cpp for the host compiler, trl_rt_cuda.cu for nvcc).  Not part of the public
// interface of generated programs (that is ../trl_rt.h).
#include <cstdio>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "trl_random.h"
#include "trl_rt.h"

namespace trl_rt {
/** Charges the time of its scope to the profiler's current region in "category" when
 *  --profile records (trl_profile.cpp). */
struct ProfScope {
    long long t0;
    int category;
    explicit ProfScope(int c) : t0(trl_prof_on ? trl_prof_begin() : 0), category(c) {}
    ~ProfScope() {
        if (trl_prof_on) trl_prof_end(t0, category);
    }
};

/** What trl_init read from a checkpoint to resume (trl_checkpoint.cpp), until run_program
 *  reaches the outermost loop and trl_checkpoint_resume puts it back. */
struct Resume {
    bool valid = false;
    long long iteration = 0;  // the loop value of the last iteration the checkpoint holds
    unsigned long long iterations_done = 0;
    std::vector<long long> next_index, points_done, stream_points;
    int cur_stream = 0;
    long long records = 0;
    unsigned long long log_bytes = 0;
    std::map<std::pair<int, long long>, std::string> pending;
    std::string arena;
    std::string host;  // the registered host region (trl_checkpoint_host)
};
}  // namespace trl_rt

struct trl_ctx {
    const trl_program_info *info = nullptr;
    std::string prog;  // argv[0]'s base name, for messages
    uint64_t seed = 0;
    std::vector<long long> bounds;
    std::string log_path;
    FILE *out = nullptr;  // stdout or the --log file
    bool quiet = false;
    int threads = 0;       // --threads; 0: the default (the CPUs this process may run on)
    void *team = nullptr;  // the host layer's thread team (trl_team_run), started on first use
    void *arena = nullptr;
    size_t arena_bytes = 0;
    void *device = nullptr;     // device layer state (cuBLAS handle, ...)
    void *workspace = nullptr;  // trl_workspace's block (device memory), freed by device_release
    size_t workspace_bytes = 0;
    void *frames = nullptr;  // trl_frames's block (device memory), freed by device_release
    size_t frames_bytes = 0;
    void *stage = nullptr;  // trl_stage's block (device memory), freed by device_release
    size_t stage_bytes = 0;
    std::string last_error;  // message of the last failed call (printed by trl_fail)
    // Emit reorder buffer (trl_rt::mark_done, flush_pending): the stream being written and, per
    // stream, the next index to write and the done flags of the points from it on
    // (done[s][k]: point next_index[s] + k was emitted or skipped); the lines of done records
    // not yet written, by (stream, index).  A skipped point has a flag and no line: PPO
    // CartPole skips ~500,000 points per rank, which as map entries cost rank 0 of a 2-rank
    // run ~0.15 s.
    int cur_stream = 0;
    std::vector<long long> next_index;
    std::vector<long long> stream_points;
    std::vector<std::deque<char>> done;
    std::map<std::pair<int, long long>, std::string> pending;
    // Progress line (stderr is a terminal and not --quiet).
    bool progress = false;
    double start_time = 0, last_progress = 0;
    long long records = 0;
    std::vector<long long> points_done;  // per stream: points emitted or skipped (guard false)
    // Checkpoints (trl_checkpoint.cpp): --checkpoint FILE, --checkpoint-every N (0: every ~60 s
    // of wall time), --resume.
    std::string checkpoint_path;
    long long checkpoint_every = 0;
    char *checkpoint_host = nullptr;  // trl_checkpoint_host: a host region checkpoints hold too
    uint64_t checkpoint_host_bytes = 0;
    bool resume_requested = false;
    bool replaying = false;                  // resuming, before the outermost loop: emits are in the log already
    unsigned long long iterations_done = 0;  // of the outermost loop, resumed runs included
    double last_checkpoint = 0;
    trl_rt::Resume resume;
    std::string profile_path;  // --profile FILE.json (trl_profile.cpp)
    // Library mode (trl_lib_init): failures end trl_lib_call with a status instead of exiting.
    bool library = false;
    std::string load_dir;  // loads' relative paths are under it ("": the working directory)
    // Data-parallel runs (trl_dist.cpp): this process's rank and the number of ranks, the
    // layer (null: one process), records of a rank > 0 not yet sent to rank 0, the digest.
    int rank = 0, world = 1, local_rank = 0;
    const trl_dist_layer *dist = nullptr;
    std::string outbox;
    size_t outbox_run = std::string::npos;  // the outbox's last entry when it is a run of skips
    long long outbox_run_next = 0;          // the local index that would extend that run
    unsigned long long digest = trl::kFnv64Offset;
    bool has_digest = false;
    long long allreduces = 0;                // trl_allreduce_mean calls so far
    bool reading_checkpoint = false;         // checkpoint_load reading the file (trl_checkpoint.cpp)
    std::vector<char> dist_send, dist_recv;  // trl_allreduce_mean's packed leaves, every rank's
};

namespace trl_rt {

/** Device layer: allocate / free the arena (one allocation), set up / tear down its state.
 *  On failure return TRL_EDEVICE with ctx->last_error set. */
int device_init(trl_ctx *ctx);
int device_alloc_arena(trl_ctx *ctx, size_t bytes);
void device_release(trl_ctx *ctx);
/** Replace *slot (ctx->workspace or ctx->frames, *slot_bytes its size) by a zeroed block of at
 *  least "bytes" bytes, 256-byte aligned (trl_workspace, trl_frames); "what" names it in the
 *  error message. */
int device_alloc_block(trl_ctx *ctx, size_t bytes, void **slot, size_t *slot_bytes, const char *what);
/** Device layer of trl_gemm / trl_gemm_tn: C[m,n] = op(A)·B, row-major, op(A) = Aᵀ for A
 *  stored [k,m] when "trans_a".  Called with the extents and dtype checked (m, n >= 1,
 *  k >= 0, each below 2^31; dtype TRL_F32 or TRL_F64). */
int device_gemm(trl_ctx *ctx, int dtype, bool trans_a, long long m, long long n, long long k, const void *a,
                const void *b, void *c);
/** Name of the device layer for --help ("host (OpenMP)", "cuda"). */
const char *device_name();
/** Whether the arena is host memory (the host layer, cuda-emu included): the host may read
 *  and write it directly, and trl_to_host / trl_to_device of it are plain copies. */
bool device_memory_is_host();

/** --resume: read and check ctx->checkpoint_path (absent: nothing to resume), keeping its
 *  state in ctx->resume; a foreign, truncated or corrupted file prints an error (TRL_EIO). */
int checkpoint_load(trl_ctx *ctx);
/** When resuming: open the log without truncating it and cut it to the checkpoint's length. */
int checkpoint_open_log(trl_ctx *ctx);

/** --profile: calibrate the timer and start recording (trl_init); write FILE.json and the table
 *  on stderr (trl_finish); count an iteration of the outermost loop (the balance report). */
void profile_start(trl_ctx *ctx);
int profile_finish(trl_ctx *ctx);
void profile_count_iteration();

/** Data-parallel runs (trl_dist.cpp).  dist_init: join the group of info->dist (nothing
 *  without one); a failure prints its message (TRL_EDEVICE).  Then the ranks check that they
 *  run the same program (its hash).  dist_record: the record (or skip, "line" empty) of point
 *  "index" of "stream" on a rank > 0, kept for rank 0; dist_exchange: every rank's kept records
 *  reach rank 0's reorder buffer (collective); dist_finish: the last exchange and the digest
 *  comparison ("status" so far; returns the status to exit with), then leave the group. */
int dist_init(trl_ctx *ctx, int *argc, char ***argv);
void dist_record(trl_ctx *ctx, int stream, long long index, const std::string &line);
int dist_exchange(trl_ctx *ctx);
int dist_finish(trl_ctx *ctx, int status);
/** The index of a record of this rank in the merged stream: index · ranks + rank, so that
 *  the records are in (point, rank) order. */
inline long long dist_index(const trl_ctx *ctx, long long index) { return index * ctx->world + ctx->rank; }

/** Point "index" of "stream" is done: emitted as "line", or skipped when "line" is empty; it is
 *  written in its turn by flush_pending (trl_rt_common.cpp).  The caller has checked that the
 *  point is not done or written already (index >= next_index[stream]). */
void mark_done(trl_ctx *ctx, int stream, long long index, std::string line);
/** Point "index" of "stream" is done and not written yet. */
bool is_done(const trl_ctx *ctx, int stream, long long index);
/** Write every pending record that is next in (stream, index) order (trl_rt_common.cpp). */
void flush_pending(trl_ctx *ctx, bool all);

/** Record "message" as ctx->last_error and return "status". */
int set_error(trl_ctx *ctx, int status, const std::string &message);

}  // namespace trl_rt
