#pragma once
/* trl_rt — the runtime every generated trlc program links (issue 4).
 *
 * One small C-style interface: prefix trl_, a context first, int status
 * returns (TRL_OK or a TRL_E* code), no CUDA types (device memory is void *).
 * The same generated source compiles with nvcc (device layer:
 * runtime/rt/trl_rt_cuda.cu) and with the host C++ compiler (device layer:
 * runtime/rt/trl_rt_host.cpp, a thread team), each with runtime/rt/trl_rt_common.cpp; kernels
 * reach the device only through the macros below.  Formatting of emit records is shared
 * with the reference interpreter (trl_json.h) so that both print the same bytes.
 *
 * Life of a generated program:
 *   trl_ctx *ctx;  int rc = trl_init(&ctx, &kProgramInfo, argc, argv);
 *   if (rc != TRL_OK) return trl_exit_code(rc);     // --help, bad flags: message printed
 *   char *arena = (char *)trl_arena(ctx);            // one allocation of info.arena_bytes
 *   ... loop nest: TRL_LAUNCH(kernel, n, work, args...); trl_emit(ctx, ...); ...
 *   return trl_finish(ctx);                          // flush logs, print arena + peak memory
 */
#include <stddef.h>
#include <stdint.h>

/* Bytes after the arena (in the same allocation) for the record of a run-time error raised in a
 * kernel; the loaded tensors (info.load_bytes) follow it.  The arena itself stays
 * info.arena_bytes, the memory plan's peak. */
#define TRL_ARENA_TAIL 256

/* Called by TRL_LAUNCH after every launch; a generated program redefines it to check the
 * run-time error record (the names ctx and arena of the launching scope). */
#ifndef TRL_AFTER_LAUNCH
#define TRL_AFTER_LAUNCH() ((void)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* The region profiler (--profile FILE.json; runtime/rt/trl_profile.cpp).  trl_prof_on is 1
 * while it records; run_program sets trl_prof_region_now (TRL_REGION) before each statement's
 * launches, and the timed calls add their time to that region's category. */
enum {
    TRL_PROF_KERNELS,
    TRL_PROF_PRODUCTS,
    TRL_PROF_COPIES,
    TRL_PROF_IO,
    TRL_PROF_WAITING,
    TRL_PROF_COMMUNICATION, /* --distributed: messages between the ranks (trl_allreduce_mean) */
    TRL_PROF_CATEGORIES
};
extern int trl_prof_on;
extern int trl_prof_region_now;
/* Timestamps in ticks (the x86 time-stamp counter, else ns; scaled to seconds in the report). */
long long trl_prof_now(void);                  /* a timestamp (ticks) */
long long trl_prof_begin(void);                /* a timestamp (ticks) opening a timed call */
void trl_prof_end(long long t0, int category); /* charge now - t0 to the current region */
void trl_prof_waited(long long ticks);         /* waiting inside the current timed call */
/* Charge "seconds" to a region's category (the device layer's kernel times, measured with CUDA
 * events and read back later: runtime/rt/trl_rt_cuda.cu). */
void trl_prof_charge(int region, int category, double seconds);
/* CUDA builds: around a launch while profiling, events on the stream that time the kernel on
 * the GPU (charged to the region current at trl_prof_gpu_begin, category "category"), read back
 * when the host waits for the device anyway (a copy to the host, the end) or when 4096 are
 * pending: no synchronisation per launch. */
void trl_prof_gpu_begin(struct trl_ctx *ctx);
void trl_prof_gpu_end(struct trl_ctx *ctx, int category);
#ifdef __cplusplus
}
#endif
/* TRL_REGION(k) prefixes the first timed call of statement k in run_program (codegen puts it
 * on that call's line): `TRL_REGION(3) TRL_LAUNCH(k_a_0, ...);`. */
#define TRL_REGION(k) trl_prof_region_now = (k);

/* The grid of a launch of n >= 1 points on the device (and under TRL_CUDA_EMU): blocks of
 * n rounded up to a warp (32) when n < 256, else of 256 threads; ceil(n / block) blocks, at most
 * TRL_GRID_MAX_BLOCKS (65,536 threads: a quarter of an H100's resident threads), the kernels'
 * grid-stride loops (TRL_KERNEL_INDEX) covering the points beyond.  A kernel's frames
 * (TRLG_FRAME, trl_gen.h) are indexed by the thread's index in this grid: codegen sizes them
 * for TRL_GRID_THREADS(n) threads (codegen/emit_program.cpp, kernel_text). */
#define TRL_GRID_BLOCK(n) ((n) < 256 ? ((n) + 31) / 32 * 32 : 256LL)
#define TRL_GRID_MAX_BLOCKS 256LL
#define TRL_GRID_BLOCKS(n)                                                                                             \
    (((n) + TRL_GRID_BLOCK(n) - 1) / TRL_GRID_BLOCK(n) < TRL_GRID_MAX_BLOCKS                                           \
         ? ((n) + TRL_GRID_BLOCK(n) - 1) / TRL_GRID_BLOCK(n)                                                           \
         : TRL_GRID_MAX_BLOCKS)
#define TRL_GRID_THREADS(n) (TRL_GRID_BLOCKS(n) * TRL_GRID_BLOCK(n))
/* The most threads of a row-split kernel's block on the device (trl_rows_block), and the cap
 * without $TRLC_ROWS_THREADS: PPO CartPole on an H200 (2026-11-27, 100 iterations, one run
 * each) took 13.67 s with 32, 14.71 s with 128 and 14.70 s with 256 — every thread also
 * computes the kernel's whole values, so more threads add that work and its frame traffic. */
#define TRL_ROWS_MAX_BLOCK 256LL
#define TRL_ROWS_DEFAULT_BLOCK 32LL

#if defined(__cplusplus) && !defined(__CUDACC__)
/* The emulated grid of TRL_CUDA_EMU (below; runtime/rt/trl_rt_host.cpp, always compiled into
 * the host runtime). */
struct trl_emu_dim3 {
    unsigned x, y, z;
};
extern thread_local trl_emu_dim3 blockIdx, threadIdx, blockDim, gridDim;
typedef struct trl_ctx trl_ctx;
extern "C" {
/* Runs task(arg) once per thread of the grid of n >= 1 points (TRL_GRID_BLOCK), with
 * blockIdx, threadIdx, blockDim and gridDim set, in an order shuffled per launch (seed:
 * $TRL_EMU_SEED, default 1), over all threads of the team. */
void trl_emu_grid(trl_ctx *ctx, long long n, void (*task)(void *arg), void *arg);
/* 1 while the calling thread runs a task of trl_emu_grid or trl_emu_block (trlg_raise records
 * its error). */
int trl_emu_in_kernel(void);
/* Runs task(arg) on TRL_GRID_BLOCK(1) threads at once, one block (threadIdx.x = 0 .. 31), for a
 * row-split kernel, whose threads meet at trl_emu_barrier. */
void trl_emu_block(trl_ctx *ctx, void (*task)(void *arg), void *arg);
/* Inside trl_emu_block: returns when every thread of the block has called it. */
void trl_emu_barrier(void);
}
template <class F>
inline void trl_emu_launch(trl_ctx *ctx, long long n, const F &f) {
    trl_emu_grid(
        ctx, n, [](void *a) { (*static_cast<const F *>(a))(); }, const_cast<F *>(&f));
}
template <class F>
inline void trl_emu_block_launch(trl_ctx *ctx, const F &f) {
    trl_emu_block(
        ctx, [](void *a) { (*static_cast<const F *>(a))(); }, const_cast<F *>(&f));
}
#endif

#if defined(__CUDACC__) || defined(TRL_CUDA_EMU)
/* Kernels as the device runs them (on a GPU, or under TRL_CUDA_EMU).  A kernel's first
 * parameters: `TRL_KERNEL k(TRL_KERNEL_RANGE, char *arena, ...)`; n is the number of points (the
 * same spelling as on the host, where a launch passes a sub-range). */
#define TRL_KERNEL_RANGE long long n
/* `TRL_KERNEL_INDEX(i, n) { body }`: body for this thread's points i < n (a grid-stride loop:
 * one point per thread under TRL_LAUNCH's grid up to TRL_GRID_MAX_BLOCKS); the same spelling as
 * on the host. */
#define TRL_KERNEL_INDEX(i, n)                                                                                         \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                                      \
         i += (long long)gridDim.x * blockDim.x)
/* The point loop of a row-split kernel (compiler/codegen/row_split.h: its signature adds `long
 * long trl_r0, long long trl_r1` after TRL_KERNEL_RANGE; its points are one), which runs on
 * every thread of its one block (trl_rows_block(rows) threads on the device, a warp under
 * TRL_CUDA_EMU): the launch passes all "rows"
 * (0, rows), made here the thread's share, rows·t/nt .. rows·(t+1)/nt for the first
 * nt = min(rows, threads) threads and none for the others, so that only thread 0's share starts
 * at row 0 (the stores of whole values are thread 0's). */
#define TRL_ROWS_INDEX(i, n)                                                                                           \
    do {                                                                                                               \
        const long long trl_rows_ = trl_r1, trl_threads_ = (long long)blockDim.x * gridDim.x;                          \
        const long long trl_t_ = (long long)blockIdx.x * blockDim.x + threadIdx.x;                                     \
        const long long trl_nt_ = trl_rows_ < trl_threads_ ? trl_rows_ : trl_threads_;                                 \
        trl_r0 = trl_t_ < trl_nt_ ? trl_rows_ * trl_t_ / trl_nt_ : trl_rows_;                                          \
        trl_r1 = trl_t_ < trl_nt_ ? trl_rows_ * (trl_t_ + 1) / trl_nt_ : trl_rows_;                                    \
    } while (0);                                                                                                       \
    for (long long i = 0; i < (n); ++i)
#endif

#if defined(__CUDACC__)
#define TRL_HOST_DEVICE __host__ __device__
#define TRL_KERNEL __global__ void
/* Both launches on the device: a grid of n threads running kernel(n, args...), checked; while
 * profiling, CUDA events around it time the kernel on the GPU (trl_prof_gpu_begin).  A launch
 * site's first launch checks the kernel against the device (trl_cuda_kernel_check): a kernel
 * the build has no code for, or one that cannot run blocks of this size, stops the program
 * with its name and the reason before it is launched. */
#define TRL_DEVICE_LAUNCH_(kernel, n, ...)                                                                             \
    TRL_DEVICE_LAUNCH_IN_(kernel, n, TRL_GRID_BLOCKS(trl_n_), TRL_GRID_BLOCK(trl_n_), __VA_ARGS__)
/* As above on a grid of "blocks" blocks of "block" threads (expressions that may read trl_n_). */
#define TRL_DEVICE_LAUNCH_IN_(kernel, n, blocks, block, ...)                                                           \
    do {                                                                                                               \
        long long trl_n_ = (n);                                                                                        \
        if (trl_n_ > 0) {                                                                                              \
            const long long trl_b_ = (block);                                                                          \
            static bool trl_checked_ = false;                                                                          \
            if (!trl_checked_) {                                                                                       \
                TRL_CHECK(trl_cuda_kernel_check(ctx, (const void *)kernel, #kernel, (int)trl_b_));                     \
                trl_checked_ = true;                                                                                   \
            }                                                                                                          \
            if (trl_prof_on) trl_prof_gpu_begin(ctx);                                                                  \
            kernel<<<(unsigned)(blocks), (unsigned)trl_b_>>>(trl_n_, __VA_ARGS__);                                     \
            if (trl_prof_on) trl_prof_gpu_end(ctx, TRL_PROF_KERNELS);                                                  \
            TRL_CHECK(trl_launch_status(ctx, #kernel));                                                                \
            TRL_AFTER_LAUNCH();                                                                                        \
        }                                                                                                              \
    } while (0)
#define TRL_LAUNCH(kernel, n, work, ...) TRL_DEVICE_LAUNCH_(kernel, n, __VA_ARGS__)
/* A row-split kernel (TRL_ROWS_INDEX above) computes rows [trl_r0, trl_r1) of its split values
 * and the rest whole; TRL_ROW_BARRIER is __syncthreads(), which makes the block's global writes
 * visible to all of it. */
#define TRL_ROW_BARRIER() __syncthreads()
/* Its one point on one block of trl_rows_block(rows) threads (up to TRL_ROWS_MAX_BLOCK). */
#define TRL_LAUNCH_ROWS(kernel, n, rows, work, ...)                                                                    \
    TRL_DEVICE_LAUNCH_IN_(kernel, n, 1, trl_rows_block(rows), 0LL, (long long)(rows), __VA_ARGS__)
#elif defined(TRL_CUDA_EMU)
/* CUDA semantics on the host (trlc --target=cuda-emu; issue 18 point 6): the generated source
 * compiled by the host compiler with the device's kernel spelling.  A launch runs every thread
 * of the device's grid (TRL_GRID_BLOCK) as an independent task, in an order shuffled per
 * launch, spread over the thread team (runtime/rt/trl_rt_host.cpp, trl_emu_grid), so that a
 * kernel that depends on the order of its threads, or shares a frame or a buffer between
 * them, gives other bytes than --interpret or a ThreadSanitizer report (--sanitize=thread).
 * blockIdx, threadIdx, blockDim and gridDim are the task's (thread-local); device math is the
 * host's. */
#define TRL_HOST_DEVICE
#define TRL_KERNEL void
/* A launch of n points through "run" (an emulator call that may use trl_n_), timed while
 * profiling. */
#define TRL_EMU_LAUNCH_(n, run)                                                                                        \
    do {                                                                                                               \
        long long trl_n_ = (n);                                                                                        \
        if (trl_n_ > 0) {                                                                                              \
            const long long trl_t0_ = trl_prof_on ? trl_prof_begin() : 0;                                              \
            run;                                                                                                       \
            TRL_AFTER_LAUNCH();                                                                                        \
            if (trl_prof_on) trl_prof_end(trl_t0_, TRL_PROF_KERNELS);                                                  \
        }                                                                                                              \
    } while (0)
#define TRL_LAUNCH(kernel, n, work, ...)                                                                               \
    TRL_EMU_LAUNCH_(n, trl_emu_launch(ctx, trl_n_, [&]() { kernel(trl_n_, __VA_ARGS__); }))
/* Row-split kernels as on the device (above): the block's threads run at once, each on an OS
 * thread of the emulator's block pool (trl_emu_block), TRL_ROW_BARRIER its barrier. */
#define TRL_ROW_BARRIER() trl_emu_barrier()
#define TRL_LAUNCH_ROWS(kernel, n, rows, work, ...)                                                                    \
    TRL_EMU_LAUNCH_(n, trl_emu_block_launch(ctx, [&]() { kernel(trl_n_, 0LL, (long long)(rows), __VA_ARGS__); }))
#else
#define TRL_HOST_DEVICE
/* On the host a kernel is a function over the points [trl_lo_, n) of its n: TRL_LAUNCH runs it
 * once over [0, n) on the calling thread unless splitting it pays, else once per thread of the
 * program's thread team (trl_team_run) over an equal share.  "work" is the launch's element
 * operations (codegen/work_estimate.h); the split uses as many threads (up to --threads and n)
 * as get TRL_MIN_THREAD_WORK each.  Every point is computed alone, so the split changes no
 * output bit.
 * A kernel is never inlined into run_program: it is called from two places per launch (the
 * calling thread's f(0, n) and the split's share), and GCC -O3 copied the smaller kernels into
 * both, compiling them again (PPO CartPole: run_program 46 -> 25 KB of code, its -O3 compile
 * 7.0 -> 5.9 s; a call per launch costs nothing next to a kernel's work). */
#define TRL_KERNEL __attribute__((noinline)) void
#define TRL_PRAGMA(x) _Pragma(#x)
#define TRL_KERNEL_RANGE long long trl_lo_, long long n
#define TRL_KERNEL_INDEX(i, n) for (long long i = trl_lo_; i < (n); ++i)
/* "work" (and "rows" below) are integer constants: a launch whose work no split would share
 * (trl_launch_threads, trl_rows_threads: under 2 * TRL_MIN_THREAD_WORK, or under 16 rows) calls
 * the kernel directly, without the split's lambda and templates (the same calls: PPO CartPole's
 * run_program compiles in 0.41 s instead of 0.49 s of CPU at -O1, 26 of its 34 launches). */
#define TRL_LAUNCH(kernel, n, work, ...)                                                                               \
    do {                                                                                                               \
        long long trl_n_ = (n);                                                                                        \
        if (trl_n_ > 0) {                                                                                              \
            const long long trl_t0_ = trl_prof_on ? trl_prof_begin() : 0;                                              \
            if constexpr ((work) < 2 * TRL_MIN_THREAD_WORK)                                                            \
                kernel(0, trl_n_, __VA_ARGS__);                                                                        \
            else                                                                                                       \
                trl_host_launch(ctx, trl_n_, (work),                                                                   \
                                [&](long long trl_lo, long long trl_hi) { kernel(trl_lo, trl_hi, __VA_ARGS__); });     \
            TRL_AFTER_LAUNCH();                                                                                        \
            if (trl_prof_on) trl_prof_end(trl_t0_, TRL_PROF_KERNELS);                                                  \
        }                                                                                                              \
    } while (0)
/* A row-split kernel (compiler/codegen/row_split.h) at its n points, its split values' "rows"
 * shared over the threads of trl_rows_threads: thread t computes rows trl_row_share(rows, t,
 * nt) of them, the rows trl_gemm's split of an [rows, ...] product gives thread t, so that a
 * thread reads back the rows of a product it computed itself. */
#define TRL_ROW_BARRIER() trl_team_barrier()
#define TRL_ROWS_INDEX(i, n) TRL_KERNEL_INDEX(i, n) /* each thread: its rows (TRL_LAUNCH_ROWS) */
#define TRL_LAUNCH_ROWS(kernel, n, rows, work, ...)                                                                    \
    do {                                                                                                               \
        long long trl_n_ = (n);                                                                                        \
        if (trl_n_ > 0) {                                                                                              \
            const long long trl_t0_ = trl_prof_on ? trl_prof_begin() : 0;                                              \
            if constexpr ((work) < 2 * TRL_MIN_THREAD_WORK || (rows) < 16)                                             \
                kernel(0, trl_n_, 0LL, (long long)(rows), __VA_ARGS__);                                                \
            else                                                                                                       \
                trl_host_launch_rows(ctx, (rows), (work), [&](long long trl_r0, long long trl_r1) {                    \
                    kernel(0, trl_n_, trl_r0, trl_r1, __VA_ARGS__);                                                    \
                });                                                                                                    \
            TRL_AFTER_LAUNCH();                                                                                        \
            if (trl_prof_on) trl_prof_end(trl_t0_, TRL_PROF_KERNELS);                                                  \
        }                                                                                                              \
    } while (0)
#ifdef __cplusplus
typedef struct trl_ctx trl_ctx;
/* The host thread team of a program (runtime/rt/trl_rt_host.cpp): --threads N threads, the
 * caller included, whose other N - 1 are started at the first split and then wait for work
 * spinning (about 0.2 ms after each part, then asleep on a condition variable).  A split costs
 * about 0.1-0.2 us while they spin (one cache line each way), against ~40 us to wake a
 * sleeping thread on a 2-vCPU VM, which is why kernels are no longer split through OpenMP
 * (whose passive threads sleep between regions).  One team per trl_ctx: programs running in
 * several application threads each get their own. */
extern "C" {
/* Threads a split may use now: --threads (default: the CPUs this process may run on), 1 while
 * the caller is itself a part of a split or inside an OpenMP parallel region. */
int trl_team_threads(trl_ctx *ctx);
/* Runs part(arg, t, nt) for t = 0 .. nt-1, t = 0 on the calling thread, the others on team
 * threads, and returns when all have returned.  1 <= nt <= trl_team_threads(ctx). */
void trl_team_run(trl_ctx *ctx, int nt, void (*part)(void *arg, int t, int nt), void *arg);
/* 1 while the calling thread runs a part of a split (trlg_raise then records the first error
 * for the host to report after the launch instead of exiting in a worker). */
int trl_team_member(void);
/* Inside a part of a split: returns when every thread of the split has called it (what each
 * wrote before is visible to all after).  Outside a split: returns at once.  Every part of the
 * split must call it the same number of times. */
void trl_team_barrier(void);
}
/* Element operations each thread of a split launch must get (TRL_LAUNCH, TRL_LAUNCH_ROWS):
 * about 1-5 us of vectorized work, so that handing a share to a spinning team thread (~0.2 us)
 * is paid for several times. */
#define TRL_MIN_THREAD_WORK (1LL << 13)
/* Threads to run a launch of n points and "work" element operations on: 1 unless splitting
 * gives each of at least two threads TRL_MIN_THREAD_WORK and a point. */
inline int trl_launch_threads(trl_ctx *ctx, long long n, long long work) {
    if (n < 2 || work < 2 * TRL_MIN_THREAD_WORK) return 1;
    long long t = work / TRL_MIN_THREAD_WORK;
    if (t > n) t = n;
    long long max_t = trl_team_threads(ctx);
    return (int)(t < max_t ? t : max_t);
}
template <class F>
struct trl_split_part {
    const F *f;
    long long n;
    static void run(void *arg, int t, int nt) {
        const trl_split_part *p = static_cast<const trl_split_part *>(arg);
        const long long lo = p->n * t / nt, hi = p->n * (t + 1) / nt;
        if (lo < hi) (*p->f)(lo, hi);
    }
};
/* Share t of nt of "rows" rows, in blocks of 8 (whole vector tiles of a product's rows):
 * blocks [B·t/nt, B·(t+1)/nt) of the B = ceil(rows / 8), clipped to rows.  trl_gemm's split of
 * a product and TRL_LAUNCH_ROWS use it both. */
inline void trl_row_share(long long rows, int t, int nt, long long *lo, long long *hi) {
    const long long blocks = (rows + 7) / 8;
    const long long a = blocks * t / nt * 8, b = blocks * (t + 1) / nt * 8;
    *lo = a < rows ? a : rows;
    *hi = b < rows ? b : rows;
}
/* Threads of a row-split launch: as many as get TRL_MIN_THREAD_WORK and 8 rows each. */
inline int trl_rows_threads(trl_ctx *ctx, long long rows, long long work) {
    long long t = work / TRL_MIN_THREAD_WORK;
    if (t > rows / 8) t = rows / 8;
    long long max_t = trl_team_threads(ctx);
    if (t > max_t) t = max_t;
    return t < 1 ? 1 : (int)t;
}
template <class F>
struct trl_rows_part {
    const F *f;
    long long rows;
    static void run(void *arg, int t, int nt) {
        const trl_rows_part *p = static_cast<const trl_rows_part *>(arg);
        long long lo, hi;
        trl_row_share(p->rows, t, nt, &lo, &hi);
        (*p->f)(lo, hi);  // also on an empty share: a row-split kernel's barriers need every thread
    }
};
/* Runs f(r0, r1) on this thread's rows of a row-split launch (all rows on one thread, or a
 * share per thread of trl_rows_threads). */
template <class F>
inline void trl_host_launch_rows(trl_ctx *ctx, long long rows, long long work, const F &f) {
    const int nt = trl_rows_threads(ctx, rows, work);
    if (nt > 1) {
        trl_rows_part<F> part{&f, rows};
        trl_team_run(ctx, nt, &trl_rows_part<F>::run, &part);
        return;
    }
    f(0, rows);
}
/* Runs f(lo, hi) over [0, n): on the calling thread, or one equal share per thread of
 * trl_launch_threads (schedule(static)'s split: share t is [n·t/nt, n·(t+1)/nt)). */
template <class F>
inline void trl_host_launch(trl_ctx *ctx, long long n, long long work, const F &f) {
    const int nt = trl_launch_threads(ctx, n, work);
    if (nt > 1) {
        trl_split_part<F> part{&f, n};
        trl_team_run(ctx, nt, &trl_split_part<F>::run, &part);
        return;
    }
    f(0, n);
}
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TRL_OK = 0,
    TRL_EXIT_SUCCESS = 1, /* --help printed: exit 0 */
    TRL_EUSAGE = 2,       /* bad command line: message printed, exit 1 */
    TRL_EIO = 3,          /* file missing / malformed: message printed, exit 1 */
    TRL_EDEVICE = 4,      /* CUDA / allocation failure: exit 2 */
    TRL_EINTERNAL = 5,
    TRL_ERUNTIME = 6 /* library mode: a run-time error of the program (index out of bounds, ...) */
};

typedef struct trl_ctx trl_ctx;

/* What the generated program tells the runtime about itself (static data). */
typedef struct trl_program_info {
    const char *name;   /* program name for --help */
    const char *source; /* the .trl path it was compiled from */
    size_t arena_bytes; /* = --emit=memplan's predicted peak */
    int num_bounds;
    const char *const *bound_names;
    const long long *bound_defaults;    /* compile-time values */
    const unsigned char *bound_runtime; /* 1: may be overridden by --bound (sizes no buffer) */
    int num_streams;                    /* emit streams, in declaration order */
    const char *const *stream_names;
    const long long *stream_points; /* records per stream (for the progress line) */
    uint64_t default_seed;
    size_t load_bytes; /* loaded tensors, after the arena tail (0: none) */
    /* 1: the stream's emit has a `when` guard (a record per point where it holds, so the
     * stream's record count is unknown; progress counts its points).  nullptr: none guarded. */
    const unsigned char *stream_guarded;
    const long long *bound_min;         /* run-time bounds: the smallest value accepted (or null) */
    const char *const *bound_fixed_why; /* fixed bounds: why, for --help (or null) */
    /* FNV-1a 64 of the generated source (without this field): a checkpoint records it, and
     * --resume refuses one written by another program or build. */
    uint64_t program_hash;
    /* 1: run_program calls trl_checkpoint_iteration at the end of each iteration of its
     * outermost loop (--checkpoint works); 0: the program has no loop to checkpoint. */
    int checkpoint_loop;
    /* The profiler's regions (--profile): one per statement of the schedule, in its order, a
     * line each ("\n"-terminated) of 4 tab-separated fields: the statement's tensor (or emit
     * stream, saved file), its group (the name of the program's `region "name" { … }` around
     * it, else acting, environment step, returns/advantages, loss and gradient, optimizer,
     * metrics or other), its source position "file:line", and its side for the CPU/GPU balance
     * ("actor": acting, environment step; "learner": loss and gradient, optimizer,
     * returns/advantages; "-": the rest), from the default group even inside a named region. */
    int num_regions;
    const char *regions;
    /* What a checkpoint holds (issue 15; the memory plan's "checkpointed" buffers): arena
     * intervals {offset, bytes, offset, bytes, ...}, sorted, disjoint; the rest of the arena is
     * dead at the end of an iteration of the outermost loop or written again before the loop
     * by the resumed run.  0, nullptr: no loop to checkpoint. */
    int num_checkpoint_ranges;
    const long long *checkpoint_ranges;
    /* Data-parallel runs (trlc --distributed=mpi, dsl/README.md §7.12): the process-group
     * layer the program was linked with (&trl_dist_mpi), or nullptr: one process. */
    const struct trl_dist_layer *dist;
} trl_program_info;

/* ---- data-parallel runs (trlc --distributed=mpi; dsl/README.md §7.12, issue 21) ----------
 * A program built with --distributed runs as N ranks (mpirun -np N ./prog): each steps its own
 * environments (random streams keyed by the rank, §8), averages the gradients of every
 * `grad(...)` over the ranks with trl_allreduce_mean, and so keeps identical parameters.  The
 * messages go through a process-group layer, a table of functions: runtime/rt/trl_dist_mpi.cpp
 * (Open MPI or any MPI-3 library) is compiled and linked only into programs built with
 * --distributed=mpi, so the runtime itself and every other program depend on no MPI.  Each
 * layer function is collective (every rank calls it, in the same order) and returns 0, or
 * non-zero with a message in the layer's error text. */
typedef struct trl_dist_layer {
    const char *name; /* "mpi" */
    /* Join the group: *rank in [0, *size), *local_rank the rank among this node's processes
     * (which GPU to use).  On failure a message in err (errlen bytes). */
    int (*init)(int *argc, char ***argv, int *rank, int *size, int *local_rank, char *err, size_t errlen);
    /* Every rank's "bytes" bytes (the same count on every rank) into recv, in rank order
     * (size · bytes bytes). */
    int (*allgather)(const void *send, unsigned long long bytes, void *recv);
    /* Rank 0 receives every rank's block of its own size: sizes[r] (size entries) and the
     * blocks in rank order at *recv (malloc'ed by the layer, freed by the caller with free);
     * on other ranks sizes and recv are not touched. */
    int (*gather)(const void *send, unsigned long long bytes, unsigned long long *sizes, void **recv);
    /* The message of the last failure. */
    const char *(*error)(void);
    /* Leave the group normally (after the last collective). */
    void (*finalize)(void);
    /* Stop every rank now, with exit code "code" (one rank failed; never returns). */
    void (*abort)(int code);
    /* The mean over the ranks of "count" values of "dtype" (TRL_F32, TRL_F64) in device memory,
     * in place, ordered on "stream" (a cudaStream_t; null: the default stream) after the
     * kernels launched before it.  The order of the sum is the library's, so its bits may
     * differ from the ordered mean's.  Null in a layer that moves host memory only: the runtime
     * then copies the values to the host, allgathers them and takes the ordered mean. */
    int (*allreduce_mean_device)(void *data, long long count, int dtype, void *stream);
} trl_dist_layer;

/* The MPI layer (runtime/rt/trl_dist_mpi.cpp) and the NCCL layer of CUDA builds
 * (runtime/rt/trl_dist_nccl.cpp: gradients by NCCL, the rest by MPI). */
extern const trl_dist_layer trl_dist_mpi;
extern const trl_dist_layer trl_dist_nccl;

/* Parse argv (--seed N, --log FILE, --bound NAME=V, --threads N, --quiet, --help), allocate
 * the arena, open the log.  Prints its own messages. */
int trl_init(trl_ctx **ctx, const trl_program_info *info, int argc, char **argv);
/* Checkpoint and resume (--checkpoint FILE [--checkpoint-every N] [--resume];
 * runtime/rt/trl_checkpoint.cpp).  run_program calls trl_checkpoint_resume right before its
 * outermost loop, whose first value is *first and step "step": when the run resumes a
 * checkpoint, the arena and the emit streams' state are put back and *first becomes the value
 * after the checkpoint's last iteration; and trl_checkpoint_iteration(ctx, c) at the end of iteration c,
 * which writes FILE every N-th iteration (default: once a minute of wall time) and counts the
 * iteration for --profile's balance report. */
int trl_checkpoint_resume(trl_ctx *ctx, long long *first, long long step);
int trl_checkpoint_iteration(trl_ctx *ctx, long long iteration);
/* A host region that checkpoints hold and --resume restores with the arena's ranges: the host
 * arena of a program compiled with --mem-budget (its swapped and staged buffers).  Called by
 * run_program before trl_checkpoint_resume; "bytes" is part of what a checkpoint must match. */
int trl_checkpoint_host(trl_ctx *ctx, void *host, size_t bytes);

/* Process exit code for a status: 0 for TRL_OK / TRL_EXIT_SUCCESS, 1 user errors, 2 others. */
int trl_exit_code(int status);
/* Flush and close logs, print "arena: N bytes, peak memory: M bytes (max resident set), run
 * time: S s" (unless --quiet; S from the end of trl_init), free everything; returns the process
 * exit code. */
int trl_finish(trl_ctx *ctx);

void *trl_arena(trl_ctx *ctx); /* device (or host) base of the arena */
uint64_t trl_seed(trl_ctx *ctx);
long long trl_bound(trl_ctx *ctx, int k); /* value of bound k after --bound overrides */

/* Copies between the arena (device) and host memory. */
int trl_to_host(trl_ctx *ctx, void *dst, const void *device_src, size_t bytes);
int trl_to_device(trl_ctx *ctx, void *device_dst, const void *src, size_t bytes);
int trl_synchronize(trl_ctx *ctx);
/* The status of a CUDA runtime call made by generated code itself ("cuda_status" is its
 * cudaError_t): TRL_OK for cudaSuccess, else TRL_EDEVICE with the message "WHAT: <CUDA's error
 * text>" for trl_fail.  Defined in the CUDA device layer only. */
int trl_cuda_status(trl_ctx *ctx, int cuda_status, const char *what);
/* After a launch of "kernel" (its name): TRL_OK, or TRL_EDEVICE with "launch of kernel NAME:
 * <CUDA's error text>".  CUDA device layer only. */
int trl_launch_status(trl_ctx *ctx, const char *kernel);
/* Before a launch site's first launch of "func" (the kernel NAME) in blocks of "block" threads:
 * TRL_OK when the device can run it; else TRL_EDEVICE naming the kernel, and the reason (no code
 * for this GPU's compute capability and the --cuda-arch to rebuild with, or fewer threads per
 * block than the launch needs, with its registers and local memory).  CUDA device layer only. */
int trl_cuda_kernel_check(trl_ctx *ctx, const void *func, const char *kernel, int block);
/* The threads of a row-split kernel's block on the device for "rows" rows: rows rounded up to
 * a warp, at most $TRLC_ROWS_THREADS (a multiple of 32 from 32 to TRL_ROWS_MAX_BLOCK; default
 * TRL_ROWS_DEFAULT_BLOCK), read once.  Frames are sized for TRL_ROWS_MAX_BLOCK threads. */
int trl_rows_block(long long rows);

/* Element types of emit fields and files.  TRL_TUPLE (emit fields only): a tuple value, printed
 * as a JSON list; `rank` is the number of elements and `data` points to `rank` trl_fields (their
 * keys unused). */
enum { TRL_BOOL = 0, TRL_I32 = 1, TRL_F32 = 2, TRL_F64 = 3, TRL_TUPLE = 4 };

/* One emit field: host data of `dtype`, row-major, `rank` dims. */
typedef struct trl_field {
    const char *key;
    int dtype;
    int rank;
    const long long *shape;
    const void *data;
} trl_field;

/* Record of stream `stream` at point number `index` (its rank in the stream's lexicographic
 * point order).  Records are written in index order per stream and streams in declaration
 * order, exactly as `trlc --interpret` prints them (a reorder buffer holds early records). */
int trl_emit(trl_ctx *ctx, int stream, long long index, const trl_field *fields, int num_fields);
/* Point number `index` of a guarded stream whose guard is false: no record, but the reorder
 * buffer moves past it (every point of a stream is either emitted or skipped, once). */
int trl_emit_skip(trl_ctx *ctx, int stream, long long index);
/* Records of stream `stream` in this run, when a --bound override changed it from
 * info.stream_points (the reorder buffer writes a stream's records once all have arrived). */
void trl_set_stream_points(trl_ctx *ctx, int stream, long long points);

/* This process's rank and the number of ranks (0 and 1 without --distributed). */
int trl_rank(trl_ctx *ctx);
int trl_world_size(trl_ctx *ctx);
/* The mean over the ranks of a gradient, in place: "count" segments of f32 (TRL_F32) or f64
 * elements, segment j at data[j] (arena memory: device memory in a CUDA build) holding n[j]
 * elements.  Element-wise, the sum of rank 0's value, then rank 1's, … in rank order, in the
 * dtype, divided by the number of ranks: the order of `trlc --interpret --ranks N`, so the
 * result is the same bits on every rank and in the interpreter.  One message per call (the
 * segments are packed).  It is also where the ranks' emit records reach rank 0 (each call
 * and trl_finish).  Without --distributed: nothing (a mean over one rank). */
int trl_allreduce_mean(trl_ctx *ctx, int dtype, int count, void *const *data, const long long *n);
/* Add host arrays to the run's parameter digest (FNV-1a 64 over their bytes): codegen calls
 * it for every save whose value is the same on every rank (the parameters).  At exit the ranks
 * compare their digests: rank 0 prints "parameters identical across N ranks (digest …)", or
 * every rank exits 1 naming the ranks that differ. */
int trl_digest(trl_ctx *ctx, const trl_field *arrays, int num_arrays);

/* Save host arrays: one array → .npy, several → .npz (arr_0, arr_1, …).  With --distributed
 * only rank 0 writes. */
int trl_save(trl_ctx *ctx, const char *path, const trl_field *arrays, int num_arrays);
/* Load an .npy into host memory "dst", checking dtype and shape; a clear message otherwise. */
int trl_load(trl_ctx *ctx, const char *path, int dtype, int rank, const long long *shape, void *dst);

/* Read the loaded tensor `name` from `path` into host memory: an .npy holds one array, an .npz
 * holds num_arrays arrays (the tuple's elements in order when `tuple`, else one).  Each array's
 * dtype and shape must equal arrays[i]'s; its bytes are written to arrays[i].data (host memory,
 * written although declared const).  A missing or malformed file or a mismatch: TRL_EIO with a
 * message naming the file and the declared type. */
int trl_load_arrays(trl_ctx *ctx, const char *path, const char *name, int tuple, const trl_field *arrays,
                    int num_arrays);

/* A run-time error of the program (a failed check, message "path:line:col: error: ..."): the
 * records already in order are written, the message goes to stderr, and the process exits 1. */
void trl_runtime_error(const char *message);

/* Host memory of "bytes" bytes for a kernel's large local (codegen's TRLG_LARGE_LOCAL), owned
 * by the calling thread for the rest of the program; out of memory: a message and exit 1. */
void *trl_scratch_alloc(unsigned long long bytes);

/* Matrix product C[m,n] = A[m,k] · B[k,n] (row-major, contiguous, f32 or f64; A, B, C in
 * device memory: the arena or the workspace): on the host a libxsmm kernel for f32 products
 * with m·n·k <= 128³ when the runtime is built with TRL_USE_LIBXSMM (split by rows over the
 * thread team when each thread gets 2^16 multiply-adds: each element's sum over k keeps its
 * order), else OpenBLAS (one thread), so the summation order never depends on --threads;
 * cuBLAS on the device.  k = 0 gives zeros. */
int trl_gemm(trl_ctx *ctx, int dtype, long long m, long long n, long long k, const void *a, const void *b, void *c);
/* The same with A stored transposed: C[m,n] = Aᵀ · B for A stored [k,m] (a weight gradient
 * xᵀ·dy read from x in the arena, no transposed copy); libxsmm's TN kernel on the host,
 * cuBLAS with op(A) = T on the device. */
int trl_gemm_tn(trl_ctx *ctx, int dtype, long long m, long long n, long long k, const void *a, const void *b, void *c);

/* Device memory of at least `bytes` bytes (256-byte aligned) for the operands of the matrix
 * products that codegen hands to trl_gemm; *out receives it.  Owned by ctx and freed by
 * trl_finish; a second call returns the same block (grown if needed, contents not kept).  It
 * lies outside the arena, which stays the memory plan's size. */
int trl_workspace(trl_ctx *ctx, size_t bytes, void **out);

/* Device memory of at least `bytes` bytes (256-byte aligned, zeroed) for the frames of device
 * kernels: the locals codegen keeps out of a thread's stack (TRLG_FRAME, trl_gen.h), one frame
 * per thread of a launch's grid.  Owned by ctx like the workspace; outside the arena. */
int trl_frames(trl_ctx *ctx, size_t bytes, void **out);

/* Device memory of at least `bytes` bytes (256-byte aligned, zeroed) where the device's emit
 * kernels stage their records until the host flushes them (trlg_stage_reserve, trl_gen.h); a
 * second call returns the same block, grown if needed (contents not kept).  Owned by ctx like
 * the workspace; outside the arena. */
int trl_stage(trl_ctx *ctx, size_t bytes, void **out);

double trl_now_seconds(void);

/* ---- library mode (trlc --emit=library; the generated NAME.cu's C API calls these).  A
 * library context prints nothing and never exits the process: a failed TRL_CHECK, a run-time
 * error of the program or a failed load ends the current trl_lib_call with its status, and
 * the message is trl_lib_error's.  Kernels run on the calling thread (no thread team). */
/* A context for "info" without a command line: the arena (and the loaded tensors' region after
 * it) allocated, loads read relative to "dir" (null or "": the working directory).  On failure
 * *out is null and the message is copied to err (errlen bytes, may be 0). */
int trl_lib_init(trl_ctx **out, const trl_program_info *info, const char *dir, char *err, size_t errlen);
/* Runs fn(arg) with the library's error handling: TRL_OK, or the status of the first failure
 * inside it (its message in trl_lib_error). */
int trl_lib_call(trl_ctx *ctx, void (*fn)(void *arg), void *arg);
/* Records "message" as the context's error and returns "status" (a bad argument of the API). */
int trl_lib_fail(trl_ctx *ctx, int status, const char *message);
/* The message of the last failure ("" after none). */
const char *trl_lib_error(const trl_ctx *ctx);
/* Frees the context and everything it allocated (null: nothing). */
void trl_lib_release(trl_ctx *ctx);

/* Report a failed call and stop: "prog.cu:123: trl_save(...) failed: message". */
void trl_fail(trl_ctx *ctx, int status, const char *call, const char *file, int line);

#ifdef __cplusplus
}
#endif

#define TRL_CHECK(call)                                                                                                \
    do {                                                                                                               \
        int trl_status_ = (call);                                                                                      \
        if (trl_status_ != TRL_OK) trl_fail(ctx, trl_status_, #call, __FILE__, __LINE__);                              \
    } while (0)
