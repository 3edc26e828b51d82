// trl_rt_host — the host device layer of generated programs (issue 4): the arena is one aligned
// host allocation, "device" copies are memcpy, kernels are loops split over a thread team (TRL_KERNEL_INDEX in
// trl_rt.h), matrix products go to libxsmm's JIT kernels (small f32 products, when built with
// TRL_USE_LIBXSMM) and to OpenBLAS (cblas_sgemm / cblas_dgemm: f64, larger f32, and every
// product without TRL_USE_LIBXSMM).  Compiled with trl_rt_common.cpp by the host C++ compiler;
// nvcc builds use trl_rt_cuda.cu instead.
//
// Why libxsmm (tools/bench/README.md, measured by tools/bench/small_gemm.sh): for the products
// a small RL network runs ([4,64]·[64,64] in the rollout, [128,64]·[64,64] and [64,128]·[128,64]
// in the update) it took 2.2-3.8x less time per call than this machine's OpenBLAS, whose
// dynamic-arch build does not know the CPU and falls back to its AVX2 kernels, plus a copy
// (packing) of each operand; libxsmm generates one AVX-512/AVX2 kernel per shape for the
// running CPU at first use, without packing or a blocking strategy to choose per call.
#include <cblas.h>
#if defined(TRL_USE_LIBXSMM)
#include <libxsmm.h>
#endif

#include <alloca.h>
#include <sched.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rt/trl_rt_internal.h"

// OpenMP threads wait passively (sleep in the kernel) between parallel regions unless the user
// chose a policy.  libgomp's default spins about 300000 rounds after every region, which makes
// a generated program with many small kernels many times slower on a machine whose cores are
// shared (numbers in dsl/README §7.7); the results do not depend on the wait policy.  libgomp
// reads OMP_WAIT_POLICY once, in its initializer, before main, and libc sets up `environ` only
// after the executable's .preinit_array functions run, so setenv cannot reach it in time.
// trl_preinit_wait_policy therefore re-executes the program (/proc/self/exe, same argv) with
// OMP_WAIT_POLICY=PASSIVE added to the environment, before any library initializer has run;
// it does nothing when OMP_WAIT_POLICY or GOMP_SPINCOUNT is already set, and if the exec
// fails the program simply goes on with libgomp's default.  The runtime only defines it: the
// generated source puts it in .preinit_array next to its `main` (codegen/emit_program.cpp),
// so an executable that trlc builds re-executes itself, and an application that links the
// runtime under its own main, or includes the generated source with TRL_NO_MAIN, never does.
static bool trl_env_has(char **envp, const char *name) {
    size_t n = std::strlen(name);
    for (char **e = envp; e && *e; ++e)
        if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return true;
    return false;
}
extern "C" void trl_preinit_wait_policy(int, char **argv, char **envp) {
    if (!argv || !argv[0] || trl_env_has(envp, "OMP_WAIT_POLICY") || trl_env_has(envp, "GOMP_SPINCOUNT")) return;
    static char policy[] = "OMP_WAIT_POLICY=PASSIVE";
    size_t count = 0;
    while (envp && envp[count]) ++count;
    char **env = static_cast<char **>(alloca((count + 2) * sizeof(char *)));
    for (size_t i = 0; i < count; ++i) env[i] = envp[i];
    env[count] = policy;
    env[count + 1] = nullptr;
    execve("/proc/self/exe", argv, env);  // returns only on failure: keep going
}

// ---- the thread team (trl_team_run; trl_rt.h says what it is for) ------------------------------
namespace {

/** How long a team thread spins for the next part before it sleeps: about the length of a small
 *  program's sequential phase (PPO CartPole's rollout of one iteration, ~0.3 ms on one core),
 *  so that the update's many short splits never wait for a wake-up. */
constexpr std::chrono::microseconds kSpin(500);

/** Splits are used only while an empty split's round trip is at most this (microseconds;
 *  environment TRL_SPLIT_MAX_ROUND_TRIP_US overrides it, 0 turns splitting off).  The team
 *  measures it when it starts and again every ~50 ms (calibrate): on the 2-vCPU VMs this was
 *  written on, it moved between ~0.09 us and 0.5-0.85 us from minute to minute (the host placing
 *  the two vCPUs near or far apart), and in the slow state every cache line a split moves
 *  between the cores costs as much more: PPO CartPole's update split over 2 threads took 1.95 s
 *  where one thread took 1.35 s (and 1.16 s split in the fast state). */
double max_round_trip_us() {
    static const double limit = [] {
        const char *e = std::getenv("TRL_SPLIT_MAX_ROUND_TRIP_US");
        return e && *e ? std::atof(e) : 0.25;
    }();
    return limit;
}

/** How often the team measures again (calibrate), at the earliest. */
constexpr std::chrono::milliseconds kCalibrateEvery(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

thread_local int tl_member = 0;  // trl_team_member
struct Team;
thread_local Team *tl_team = nullptr;  // the team whose split the calling thread runs a part of

/** One program's team: "size" threads, the caller (thread 0) and size - 1 workers. */
struct Team {
    int size = 1;
    std::vector<std::thread> workers;
    // A split: part/arg/nt are written, then generation is bumped (release); worker t < nt runs
    // part(arg, t, nt) and decrements pending (release); the caller waits for pending == 0.
    alignas(64) std::atomic<unsigned> generation{0};
    alignas(64) std::atomic<int> pending{0};
    void (*part)(void *, int, int) = nullptr;
    void *arg = nullptr;
    int nt = 0;
    bool stop = false;  // written before a generation bump
    // trl_team_barrier of the nt threads of the current split: the last to arrive resets
    // "arrived" and bumps "phase", which the others spin on.
    alignas(64) std::atomic<int> arrived{0};
    alignas(64) std::atomic<unsigned> phase{0};
    // Whether splits pay on this machine now (calibrate): the round trip of an empty split.
    std::atomic<bool> splits_pay{true};
    double round_trip_us = 0;
    std::chrono::steady_clock::time_point calibrated;
    unsigned queries = 0;  // trl_team_threads calls since the last look at the clock
    // Sleeping: a worker that spun kSpin without a new generation waits on "wake".
    std::mutex lock;
    std::condition_variable wake;
    std::atomic<int> sleepers{0};

    void worker(int t) {
        unsigned seen = 0;
        for (;;) {
            unsigned g = generation.load(std::memory_order_acquire);
            auto start = std::chrono::steady_clock::now();
            for (unsigned spins = 1; g == seen; ++spins) {
                cpu_relax();
                g = generation.load(std::memory_order_acquire);
                if (g != seen || spins % 256 != 0) continue;
                if (spins % 1024 == 0) std::this_thread::yield();  // more threads than CPUs
                if (std::chrono::steady_clock::now() - start > kSpin) {
                    // Dekker with trl_team_run: it bumps generation then reads sleepers, this
                    // thread counts itself then reads generation (both sequentially consistent),
                    // so either it sees the new generation or the caller sees a sleeper.
                    std::unique_lock<std::mutex> hold(lock);
                    sleepers.fetch_add(1);
                    while ((g = generation.load()) == seen) wake.wait(hold);
                    sleepers.fetch_sub(1);
                }
            }
            seen = g;
            if (stop) return;
            if (t < nt) {
                tl_member = 1;
                tl_team = this;
                part(arg, t, nt);
                tl_member = 0;
                tl_team = nullptr;
                pending.fetch_sub(1, std::memory_order_release);
            }
        }
    }

    void run(int n, void (*p)(void *, int, int), void *a) {
        part = p;
        arg = a;
        nt = n;
        pending.store(n - 1, std::memory_order_relaxed);
        generation.fetch_add(1);  // sequentially consistent: see worker()
        if (sleepers.load() > 0) {
            std::lock_guard<std::mutex> hold(lock);
            wake.notify_all();
        }
        tl_member = 1;
        tl_team = this;
        p(a, 0, n);
        tl_member = 0;
        tl_team = nullptr;
        // Spin for the other parts; yield now and then, in case a team thread waits for this
        // CPU (more threads than CPUs).
        const long long w0 = trl_prof_on ? trl_prof_now() : 0;
        for (unsigned spins = 1; pending.load(std::memory_order_acquire) > 0; ++spins) {
            cpu_relax();
            if (spins % 1024 == 0) std::this_thread::yield();
        }
        if (trl_prof_on) trl_prof_waited(trl_prof_now() - w0);
    }

    /** Times empty splits over every thread (after a few that wake sleeping workers) and sets
     *  splits_pay to whether the median round trip is at most max_round_trip_us(). */
    void calibrate() {
        auto nothing = [](void *, int, int) {};
        for (int i = 0; i < 4; ++i) run(size, nothing, nullptr);
        double us[15];
        for (double &u : us) {
            auto t0 = std::chrono::steady_clock::now();
            run(size, nothing, nullptr);
            u = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        }
        std::sort(us, us + 15);
        round_trip_us = us[7];
        splits_pay = round_trip_us <= max_round_trip_us();
        calibrated = std::chrono::steady_clock::now();
    }

    void barrier() {
        const unsigned ph = phase.load(std::memory_order_acquire);
        if (arrived.fetch_add(1, std::memory_order_acq_rel) == nt - 1) {
            arrived.store(0, std::memory_order_relaxed);
            phase.store(ph + 1, std::memory_order_release);
            return;
        }
        for (unsigned spins = 1; phase.load(std::memory_order_acquire) == ph; ++spins) {
            cpu_relax();
            if (spins % 1024 == 0) std::this_thread::yield();
        }
    }

    ~Team() {
        stop = true;
        generation.fetch_add(1);
        {
            std::lock_guard<std::mutex> hold(lock);
            wake.notify_all();
        }
        for (std::thread &w : workers) w.join();
    }
};

/** The CPUs this process may run on (its affinity mask), at least 1. */
int allowed_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

Team *team_of(trl_ctx *ctx) {
    if (!ctx->team) {
        Team *t = new Team;
        t->size = ctx->threads > 0 ? ctx->threads : allowed_cpus();
        ctx->team = t;
        for (int w = 1; w < t->size; ++w) t->workers.emplace_back([t, w] { t->worker(w); });
        if (t->size > 1) t->calibrate();
    }
    return static_cast<Team *>(ctx->team);
}

}  // namespace

extern "C" int trl_team_member(void) { return tl_member; }

extern "C" void trl_team_barrier(void) {
    if (tl_team) tl_team->barrier();
}

extern "C" int trl_team_threads(trl_ctx *ctx) {
    if (tl_member) return 1;
#ifdef _OPENMP
    if (omp_in_parallel()) return 1;
#endif
    const int size = ctx->team          ? static_cast<Team *>(ctx->team)->size
                     : ctx->threads > 0 ? ctx->threads
                                        : allowed_cpus();
    if (size <= 1) return 1;
    Team *t = team_of(ctx);
    if (++t->queries % 1024 == 0 && std::chrono::steady_clock::now() - t->calibrated > kCalibrateEvery) t->calibrate();
    return t->splits_pay ? size : 1;
}

extern "C" void trl_team_run(trl_ctx *ctx, int nt, void (*part)(void *, int, int), void *arg) {
    Team *t = team_of(ctx);
    if (nt > t->size) nt = t->size;
    if (nt <= 1) {
        part(arg, 0, 1);
        return;
    }
    t->run(nt, part, arg);
}

namespace trl_rt {

#if defined(TRL_USE_LIBXSMM)
const char *device_name() { return "host (OpenMP, libxsmm, OpenBLAS)"; }
#else
const char *device_name() { return "host (OpenMP, OpenBLAS)"; }
#endif
bool device_memory_is_host() { return true; }

int device_init(trl_ctx *ctx) {
#if defined(TRL_USE_LIBXSMM)
    libxsmm_init();
#endif
    // One OpenBLAS thread: the products are called from the host between launches, and a
    // single thread makes their summation order independent of --threads by construction (and
    // keeps OpenBLAS's own thread pool from competing with the team's on a shared machine).
    openblas_set_num_threads(1);
    return TRL_OK;
}

int device_alloc_arena(trl_ctx *ctx, size_t bytes) {
    const size_t align = 256;  // as cudaMalloc: every buffer offset of the plan stays aligned
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    void *p = std::aligned_alloc(align, rounded);
    if (!p) return set_error(ctx, TRL_EDEVICE, "cannot allocate the arena of " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, rounded);
    ctx->arena = p;
    ctx->arena_bytes = bytes;
    return TRL_OK;
}

int device_alloc_block(trl_ctx *ctx, size_t bytes, void **slot, size_t *slot_bytes, const char *what) {
    const size_t align = 256;
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    void *p = std::aligned_alloc(align, rounded);
    if (!p)
        return set_error(ctx, TRL_EDEVICE,
                         std::string("cannot allocate the ") + what + " of " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, rounded);
    std::free(*slot);
    *slot = p;
    *slot_bytes = rounded;
    return TRL_OK;
}

void device_release(trl_ctx *ctx) {
    delete static_cast<Team *>(ctx->team);  // stops and joins its threads
    ctx->team = nullptr;
    std::free(ctx->arena);
    ctx->arena = nullptr;
    std::free(ctx->workspace);
    ctx->workspace = nullptr;
    std::free(ctx->frames);
    ctx->frames = nullptr;
    std::free(ctx->stage);
    ctx->stage = nullptr;
}

}  // namespace trl_rt

extern "C" {

int trl_to_host(trl_ctx *ctx, void *dst, const void *device_src, size_t bytes) {
    // The generated program's host mirror is the arena itself on the host: nothing to copy
    // (and nothing for the profiler to time).
    if (bytes && dst != device_src) {
        trl_rt::ProfScope prof(TRL_PROF_COPIES);
        std::memcpy(dst, device_src, bytes);
    }
    return TRL_OK;
}

int trl_to_device(trl_ctx *ctx, void *device_dst, const void *src, size_t bytes) {
    if (bytes && device_dst != src) {
        trl_rt::ProfScope prof(TRL_PROF_COPIES);
        std::memcpy(device_dst, src, bytes);
    }
    return TRL_OK;
}

int trl_synchronize(trl_ctx *ctx) { return TRL_OK; }

#if defined(TRL_USE_LIBXSMM)
// Products with m·n·k up to this go to a libxsmm kernel (libxsmm's own limit for its
// small-matrix kernels is 64³; [128,64]·[64,64] measured 2.2x faster than OpenBLAS, so the limit
// here is 128³); larger ones to OpenBLAS, whose packing and cache blocking then pay off.
static const long long kXsmmMaxMnk = 128LL * 128 * 128;

/** Whether the CPU has AVX, hence vzeroupper (libxsmm only emits AVX code where it does). */
static bool xsmm_vzeroupper() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool avx = (__builtin_cpu_init(), __builtin_cpu_supports("avx"));
    return avx;
#else
    return false;
#endif
}

/** libxsmm's kernel for the row-major f32 product C[m,n] = A[m,k]·B[k,n] (contiguous, beta 0),
 *  or null when libxsmm has none.  libxsmm is column-major: row-major C = A·B is column-major
 *  Cᵀ = Bᵀ·Aᵀ, so its (m, n, k) is (n, m, k) and the kernel is called with (B, A, C).  The last
 *  shapes asked for are kept per thread (a program calls a handful of shapes in a loop);
 *  libxsmm's own dispatch, a hash lookup, generates the kernel on the first call. */
static libxsmm_smmfunction xsmm_kernel(long long m, long long n, long long k, bool ta, long long lda) {
    struct Entry {
        long long m, n, k;
        bool ta;
        long long lda;
        libxsmm_smmfunction f;
    };
    static thread_local Entry cache[8];
    static thread_local int used = 0, next = 0;
    for (int i = 0; i < used; ++i)
        if (cache[i].m == m && cache[i].n == n && cache[i].k == k && cache[i].ta == ta && cache[i].lda == lda)
            return cache[i].f;
    // Row-major C[m,n] = op(A)·B is column-major Cᵀ = Bᵀ·op(A)ᵀ: libxsmm's (m, n, k) = (n, m, k),
    // its A is our B and its B our A (stored [k, m] when transposed: TRANS_B, ld m; a block of
    // rows of a larger product has our A's leading dimension "lda").
    libxsmm_blasint xm = (libxsmm_blasint)n, xn = (libxsmm_blasint)m, xk = (libxsmm_blasint)k;
    libxsmm_blasint xlda = xm, ldb = (libxsmm_blasint)lda, ldc = xm;
    float alpha = 1, beta = 0;
    int flags = ta ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
    libxsmm_smmfunction f = libxsmm_smmdispatch(xm, xn, xk, &xlda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
    cache[next] = Entry{m, n, k, ta, lda, f};
    next = (next + 1) % 8;
    if (used < 8) ++used;
    return f;
}
#endif

}  // extern "C"

namespace {

/** Whether libxsmm computes the f32 product [m,n,k] (else OpenBLAS). */
bool xsmm_product(long long m, long long n, long long k) {
#if defined(TRL_USE_LIBXSMM)
    return m * n <= kXsmmMaxMnk && m * n * k <= kXsmmMaxMnk;  // m·n first: no overflow
#else
    (void)m, (void)n, (void)k;
    return false;
#endif
}

/** Rows [lo, hi) of the row-major product C[m,n] = op(A)·B (A stored [m,k], or [k,m] when
 *  "ta"), written to C's rows lo..hi-1, through libxsmm when "xsmm" (a kernel per block
 *  shape).  A libxsmm kernel computes each element as the sequential sum over k whatever the
 *  block of rows (it tiles m and n, never k), so an f32 product split by rows over threads has
 *  the bits of the unsplit one (test/runtime: team_test).  OpenBLAS products are not split:
 *  which of its kernels runs (and so how k is blocked) may depend on m. */
void gemm_rows(int dtype, bool ta, long long m, long long n, long long k, const void *a, const void *b, void *c,
               long long lo, long long hi, bool xsmm) {
    const long long rows = hi - lo, lda = ta ? m : k;
    if (dtype == TRL_F32) {
        const float *pa = static_cast<const float *>(a) + (ta ? lo : lo * k);
        float *pc = static_cast<float *>(c) + lo * n;
        if (k == 0) {
            std::memset(pc, 0, sizeof(float) * rows * n);
            return;
        }
#if defined(TRL_USE_LIBXSMM)
        if (xsmm) {
            if (libxsmm_smmfunction f = xsmm_kernel(rows, n, k, ta, lda)) {
                f(static_cast<const float *>(b), pa, pc);
                // The JIT kernel returns with the upper halves of the vector registers dirty;
                // the rest of the program (built without -mavx: SSE encodings, and libm) then
                // ran 2.5x slower on PPO CartPole (AMD Zen 5) until the next vzeroupper.
#if defined(__x86_64__) || defined(__i386__)
                if (xsmm_vzeroupper()) asm volatile("vzeroupper" ::: "memory");
#endif
                return;
            }
        }
#else
        (void)xsmm;
#endif
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k, 1.0f, pa,
                    (int)lda, static_cast<const float *>(b), (int)n, 0.0f, pc, (int)n);
        return;
    }
    // TRL_F64 (trl_gemm checked the dtype)
    const double *pa = static_cast<const double *>(a) + (ta ? lo : lo * k);
    double *pc = static_cast<double *>(c) + lo * n;
    if (k == 0) {
        std::memset(pc, 0, sizeof(double) * rows * n);
        return;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k, 1.0, pa,
                (int)lda, static_cast<const double *>(b), (int)n, 0.0, pc, (int)n);
}

/** A libxsmm product is split by rows over the team when each thread gets at least this many
 *  multiply-adds (about 1-2 us on one core at the FMA rate of small products) and 8 rows. */
constexpr long long kGemmSplitWork = 1LL << 16;

struct GemmSplit {
    int dtype;
    bool ta;
    long long m, n, k;
    const void *a, *b;
    void *c;
    static void run(void *arg, int t, int nt) {
        const GemmSplit *g = static_cast<const GemmSplit *>(arg);
        long long lo, hi;  // the rows TRL_LAUNCH_ROWS gives thread t
        trl_row_share(g->m, t, nt, &lo, &hi);
        if (lo < hi) gemm_rows(g->dtype, g->ta, g->m, g->n, g->k, g->a, g->b, g->c, lo, hi, true);
    }
};

}  // namespace

int trl_rt::device_gemm(trl_ctx *ctx, int dtype, bool ta, long long m, long long n, long long k, const void *a,
                        const void *b, void *c) {
    const bool xsmm = dtype == TRL_F32 && k > 0 && xsmm_product(m, n, k);
    if (xsmm) {
        const long long work = m * n * k;  // at most 128³ here
        const long long nt = std::min<long long>(trl_team_threads(ctx), std::min(work / kGemmSplitWork, m / 8));
        if (nt > 1) {
            GemmSplit g{dtype, ta, m, n, k, a, b, c};
            trl_team_run(ctx, static_cast<int>(nt), &GemmSplit::run, &g);
            return TRL_OK;
        }
    }
    gemm_rows(dtype, ta, m, n, k, a, b, c, 0, m, xsmm);
    return TRL_OK;
}

// ---- CUDA semantics on the host (trl_rt.h, TRL_CUDA_EMU; trlc --target=cuda-emu) ----------
// Every thread of a launch's grid is a task; the tasks run in an order shuffled per launch
// (a xorshift generator seeded by TRL_EMU_SEED, default 1, and the launch count) over all the
// team's threads, whether splits pay or not: the point is to run them concurrently.
thread_local trl_emu_dim3 blockIdx, threadIdx, blockDim, gridDim;

namespace {

thread_local int tl_emu_kernel = 0;  // trl_emu_in_kernel

/** Runs task(arg) on the calling OS thread as thread "id" of a grid of "grid" blocks of "block"
 *  threads (blockIdx and the others set, trl_emu_in_kernel 1 meanwhile). */
void run_as_grid_thread(unsigned id, unsigned block, unsigned grid, void (*task)(void *), void *arg) {
    blockIdx = {id / block, 0, 0};
    threadIdx = {id % block, 0, 0};
    blockDim = {block, 1, 1};
    gridDim = {grid, 1, 1};
    tl_emu_kernel = 1;
    task(arg);
    tl_emu_kernel = 0;
}

struct EmuGrid {
    void (*task)(void *);
    void *arg;
    std::vector<unsigned> order;  // thread indices in the grid, shuffled
    unsigned block, grid;
    static void run(void *a, int t, int nt) {
        const EmuGrid *g = static_cast<const EmuGrid *>(a);
        for (size_t k = static_cast<size_t>(t); k < g->order.size(); k += static_cast<size_t>(nt))
            run_as_grid_thread(g->order[k], g->block, g->grid, g->task, g->arg);
    }
};

}  // namespace

extern "C" int trl_emu_in_kernel(void) { return tl_emu_kernel; }

extern "C" void trl_emu_grid(trl_ctx *ctx, long long n, void (*task)(void *), void *arg) {
    static std::atomic<unsigned long long> launches{0};
    static const unsigned long long seed = [] {
        const char *s = std::getenv("TRL_EMU_SEED");
        return s && *s ? std::strtoull(s, nullptr, 10) : 1ULL;
    }();
    const long long block = TRL_GRID_BLOCK(n), threads = TRL_GRID_THREADS(n);
    EmuGrid g{task, arg, std::vector<unsigned>(static_cast<size_t>(threads)), static_cast<unsigned>(block),
              static_cast<unsigned>(threads / block)};
    for (size_t i = 0; i < g.order.size(); ++i) g.order[i] = static_cast<unsigned>(i);
    unsigned long long x = (seed * 0x9E3779B97F4A7C15ULL) ^ (++launches * 0xBF58476D1CE4E5B9ULL) ^ 1ULL;
    for (size_t i = g.order.size(); i > 1; --i) {  // Fisher-Yates with xorshift64
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        std::swap(g.order[i - 1], g.order[x % i]);
    }
    Team *team = team_of(ctx);
    const int nt = std::max(1, std::min<int>(team->size, static_cast<int>(threads)));
    if (nt > 1)
        team->run(nt, &EmuGrid::run, &g);
    else
        EmuGrid::run(&g, 0, 1);
}

namespace {

// The block of a row-split kernel (trl_emu_block): TRL_GRID_BLOCK(1) threads at once, the
// caller as thread 0 and 31 pool threads, started at the first such launch and kept (detached:
// a program may exit from anywhere).  Mutex and condition variables only, so ThreadSanitizer
// sees every hand-over.
struct EmuBlock {
    static constexpr unsigned kThreads = TRL_GRID_BLOCK(1);
    std::mutex launch;  // one block at a time (programs in several application threads)
    std::mutex m;
    std::condition_variable start, done_cv, barrier_cv;
    unsigned long long generation = 0, barrier_generation = 0;
    unsigned done = 0, arrived = 0;
    void (*task)(void *) = nullptr;
    void *arg = nullptr;

    EmuBlock() {
        for (unsigned t = 1; t < kThreads; ++t) std::thread([this, t] { worker(t); }).detach();
    }
    void worker(unsigned t) {
        unsigned long long seen = 0;
        for (;;) {
            void (*f)(void *);
            void *a;
            {
                std::unique_lock<std::mutex> l(m);
                start.wait(l, [&] { return generation != seen; });
                seen = generation, f = task, a = arg;
            }
            run_as_grid_thread(t, kThreads, 1, f, a);
            std::lock_guard<std::mutex> l(m);
            if (++done == kThreads) done_cv.notify_one();
        }
    }
    void run(void (*f)(void *), void *a) {
        std::lock_guard<std::mutex> one(launch);
        {
            std::lock_guard<std::mutex> l(m);
            task = f, arg = a, done = 0;
            ++generation;
        }
        start.notify_all();
        run_as_grid_thread(0, kThreads, 1, f, a);
        std::unique_lock<std::mutex> l(m);
        ++done;
        done_cv.wait(l, [&] { return done == kThreads; });
    }
    void barrier() {
        std::unique_lock<std::mutex> l(m);
        const unsigned long long g = barrier_generation;
        if (++arrived == kThreads) {
            arrived = 0;
            ++barrier_generation;
            barrier_cv.notify_all();
        } else {
            barrier_cv.wait(l, [&] { return barrier_generation != g; });
        }
    }
};

EmuBlock &emu_block() {
    static EmuBlock *b = new EmuBlock;  // never destroyed: its threads are detached
    return *b;
}

}  // namespace

extern "C" void trl_emu_block(trl_ctx *, void (*task)(void *), void *arg) { emu_block().run(task, arg); }

extern "C" void trl_emu_barrier(void) { emu_block().barrier(); }
