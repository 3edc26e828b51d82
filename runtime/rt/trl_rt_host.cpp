// trl_rt_host — the host device layer of generated programs (issue 4): the arena is one aligned
// host allocation, "device" copies are memcpy, kernels are OpenMP loops (TRL_KERNEL_INDEX in
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
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

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

namespace trl_rt {

#if defined(TRL_USE_LIBXSMM)
const char *device_name() { return "host (OpenMP, libxsmm, OpenBLAS)"; }
#else
const char *device_name() { return "host (OpenMP, OpenBLAS)"; }
#endif

int device_init(trl_ctx *ctx) {
#if defined(TRL_USE_LIBXSMM)
    libxsmm_init();
#endif
    // One OpenBLAS thread: the products are called from the host outside OpenMP regions, and a
    // single thread makes their summation order independent of --threads by construction (and
    // keeps OpenBLAS's own thread pool from competing with OpenMP's on a shared machine).
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

int device_alloc_workspace(trl_ctx *ctx, size_t bytes) {
    const size_t align = 256;
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    void *p = std::aligned_alloc(align, rounded);
    if (!p) return set_error(ctx, TRL_EDEVICE, "cannot allocate the workspace of " + std::to_string(bytes) + " bytes");
    std::free(ctx->workspace);
    ctx->workspace = p;
    ctx->workspace_bytes = rounded;
    return TRL_OK;
}

void device_release(trl_ctx *ctx) {
    std::free(ctx->arena);
    ctx->arena = nullptr;
    std::free(ctx->workspace);
    ctx->workspace = nullptr;
}

}  // namespace trl_rt

extern "C" {

int trl_to_host(trl_ctx *ctx, void *dst, const void *device_src, size_t bytes) {
    // The generated program's host mirror is the arena itself on the host: nothing to copy.
    if (bytes && dst != device_src) std::memcpy(dst, device_src, bytes);
    return TRL_OK;
}

int trl_to_device(trl_ctx *ctx, void *device_dst, const void *src, size_t bytes) {
    if (bytes && device_dst != src) std::memcpy(device_dst, src, bytes);
    return TRL_OK;
}

int trl_synchronize(trl_ctx *ctx) { return TRL_OK; }

int trl_last_launch_status(trl_ctx *ctx) { return ctx->last_launch; }

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
static libxsmm_smmfunction xsmm_kernel(long long m, long long n, long long k, bool ta = false) {
    struct Entry {
        long long m, n, k;
        bool ta;
        libxsmm_smmfunction f;
    };
    static thread_local Entry cache[8];
    static thread_local int used = 0, next = 0;
    for (int i = 0; i < used; ++i)
        if (cache[i].m == m && cache[i].n == n && cache[i].k == k && cache[i].ta == ta) return cache[i].f;
    // Row-major C[m,n] = op(A)·B is column-major Cᵀ = Bᵀ·op(A)ᵀ: libxsmm's (m, n, k) = (n, m, k),
    // its A is our B and its B our A (stored [k, m] when transposed: TRANS_B, ld m).
    libxsmm_blasint xm = (libxsmm_blasint)n, xn = (libxsmm_blasint)m, xk = (libxsmm_blasint)k;
    libxsmm_blasint lda = xm, ldb = ta ? xn : xk, ldc = xm;
    float alpha = 1, beta = 0;
    int flags = ta ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
    libxsmm_smmfunction f = libxsmm_smmdispatch(xm, xn, xk, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
    cache[next] = Entry{m, n, k, ta, f};
    next = (next + 1) % 8;
    if (used < 8) ++used;
    return f;
}
#endif

}  // extern "C"

int trl_rt::device_gemm(trl_ctx *ctx, int dtype, bool ta, long long m, long long n, long long k, const void *a,
                        const void *b, void *c) {
    (void)ctx;
    if (dtype == TRL_F32) {
        if (k == 0) {
            std::memset(c, 0, sizeof(float) * m * n);
            return TRL_OK;
        }
#if defined(TRL_USE_LIBXSMM)
        if (m * n <= kXsmmMaxMnk && m * n * k <= kXsmmMaxMnk) {  // m·n first: no overflow
            if (libxsmm_smmfunction f = xsmm_kernel(m, n, k, ta)) {
                f(static_cast<const float *>(b), static_cast<const float *>(a), static_cast<float *>(c));
                // The JIT kernel returns with the upper halves of the vector registers dirty;
                // the rest of the program (built without -mavx: SSE encodings, and libm) then
                // ran 2.5x slower on PPO CartPole (AMD Zen 5) until the next vzeroupper.
#if defined(__x86_64__) || defined(__i386__)
                if (xsmm_vzeroupper()) asm volatile("vzeroupper" ::: "memory");
#endif
                return TRL_OK;
            }
        }
#endif
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
                    static_cast<const float *>(a), (int)(ta ? m : k), static_cast<const float *>(b), (int)n, 0.0f,
                    static_cast<float *>(c), (int)n);
        return TRL_OK;
    }
    // TRL_F64 (trl_gemm checked the dtype)
    if (k == 0) {
        std::memset(c, 0, sizeof(double) * m * n);
        return TRL_OK;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0,
                static_cast<const double *>(a), (int)(ta ? m : k), static_cast<const double *>(b), (int)n, 0.0,
                static_cast<double *>(c), (int)n);
    return TRL_OK;
}
