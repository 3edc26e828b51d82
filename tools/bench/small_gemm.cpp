// small_gemm — single-threaded f32 row-major matrix products of the sizes a small RL network runs
// (issue 13 §3): ns per call and share of the core's f32 FMA peak, for one library per build.
//
// Which library is compiled in is chosen by one macro (tools/bench/small_gemm.sh builds every one
// whose Debian package is installed and prints the table):
//   SG_LOOP      a plain loop nest (i, k, j: the j loop vectorizes), -O3 -march=native
//   SG_OPENBLAS  cblas_sgemm, openblas_set_num_threads(1)  (OPENBLAS_CORETYPE picks the kernels)
//   SG_BLIS      bli_sgemm (typed API, general strides), one thread (BLIS_ARCH_TYPE picks the kernels)
//   SG_EIGEN     Eigen 3 products of Maps, dynamic sizes, and with -DSG_EIGEN_FIXED fixed sizes
//   SG_XSMM      libxsmm_smmdispatch JIT kernels, dispatched once per shape before timing
//   SG_DNNL      oneDNN dnnl_sgemm (row-major BLAS-like entry), OMP_NUM_THREADS=1
// Each shape is C[M,N] = op(A)·op(B), beta = 0, in one of three forms:
//   NN  A [M,K], B [K,N]                      (forward: x·W)
//   TN  A stored [K,M], C = Aᵀ·B              (weight gradient: xᵀ·dy)
//   NT  B stored [N,K], C = A·Bᵀ              (input gradient: dy·Wᵀ)
// all row-major and contiguous (leading dimension = row length), 64-byte aligned.  The shapes are
// those of samples/ppo_cartpole.trl (E = 4 envs in the rollout, minibatch 128, hidden 64, two
// networks with 2 and 1 outputs); tools/bench/README.md says which of them reach trl_gemm.
//
// Timing: warm-up, then 60 batches of calls (~0.2 ms each) on the same hot operands; the table
// shows the best batch's ns per call (the machine is shared: the best batch is the one least
// disturbed) and the median.  Every result is checked against a double-precision product with the
// bound every summation order meets: |c − c_exact| ≤ 2·γ_K·Σ_k |a_ik||b_kj| (dsl/README §7.7).
//
// `small_gemm --peak` measures the core's f32 FMA throughput with independent FMA chains
// (12 accumulators, 256-bit and, where compiled in, 512-bit vectors): flop per ns; and the clock
// from a chain of dependent integer adds (one per cycle), to compare with 2 FMA pipes × lanes × 2.
//
// Output: tab-separated lines "label form M N K ns_best ns_median gflops ok" (one per shape).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(SG_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
extern "C" char *openblas_get_corename(void);
#elif defined(SG_BLIS)
#include <blis.h>
#elif defined(SG_EIGEN)
#include <Eigen/Core>
#elif defined(SG_XSMM)
#include <libxsmm.h>
#elif defined(SG_DNNL)
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

enum Form { NN, TN, NT };
const char *form_name(Form f) { return f == NN ? "NN" : f == TN ? "TN" : "NT"; }

struct Shape {
    Form form;
    int m, n, k;
};

// samples/ppo_cartpole.trl: rollout (4 rows), minibatch forward (128 rows), backward.
const Shape
    kShapes[] =
        {
            {NN, 4, 64, 4},    {NN, 4, 64, 64},   {NN, 4, 2, 64},   {NN, 4, 1, 64},
            {NN, 128, 64, 4},  {NN, 128, 64, 64}, {NN, 128, 2, 64}, {NN, 128, 1, 64},
            {NN, 4, 64, 128},  {NN, 64, 64, 128},  // weight gradients as trl_gemm gets them today
            {TN, 4, 64, 128},  {TN, 64, 64, 128}, {TN, 64, 2, 128}, {TN, 64, 1, 128},
            {NT, 128, 64, 64}, {NT, 128, 64, 2},  {NT, 128, 64, 1},
};

double now_ns() {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Leading dimensions of the stored (row-major) operands.
int lda_of(const Shape &s) { return s.form == TN ? s.m : s.k; }
int ldb_of(const Shape &s) { return s.form == NT ? s.k : s.n; }
float a_at(const Shape &s, const float *a, int i, int k) {
    return s.form == TN ? a[(size_t)k * s.m + i] : a[(size_t)i * s.k + k];
}
float b_at(const Shape &s, const float *b, int k, int j) {
    return s.form == NT ? b[(size_t)j * s.k + k] : b[(size_t)k * s.n + j];
}

#if defined(SG_EIGEN)
using Dyn = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
#if defined(SG_EIGEN_FIXED)
template <int M, int N, int K, int F>
void eigen_fixed(const float *a, const float *b, float *c) {
    using MN = Eigen::Matrix<float, M, N, (N == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
    Eigen::Map<MN, Eigen::Aligned64> C(c);
    if constexpr (F == NN) {
        using MK = Eigen::Matrix<float, M, K, (K == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
        using KN = Eigen::Matrix<float, K, N, (N == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
        C.noalias() = Eigen::Map<const MK, Eigen::Aligned64>(a) * Eigen::Map<const KN, Eigen::Aligned64>(b);
    } else if constexpr (F == TN) {
        using KM = Eigen::Matrix<float, K, M, (M == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
        using KN = Eigen::Matrix<float, K, N, (N == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
        C.noalias() = Eigen::Map<const KM, Eigen::Aligned64>(a).transpose() * Eigen::Map<const KN, Eigen::Aligned64>(b);
    } else {
        using MK = Eigen::Matrix<float, M, K, (K == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
        using NK = Eigen::Matrix<float, N, K, (K == 1 ? Eigen::ColMajor : Eigen::RowMajor)>;
        C.noalias() = Eigen::Map<const MK, Eigen::Aligned64>(a) * Eigen::Map<const NK, Eigen::Aligned64>(b).transpose();
    }
}
using FixedFn = void (*)(const float *, const float *, float *);
FixedFn eigen_fixed_fn(const Shape &s) {
#define SG_FIX(F, M, N, K)                                                                                             \
    if (s.form == F && s.m == M && s.n == N && s.k == K) return eigen_fixed<M, N, K, F>;
    SG_FIX(NN, 4, 64, 4)
    SG_FIX(NN, 4, 64, 64) SG_FIX(NN, 4, 2, 64) SG_FIX(NN, 4, 1, 64) SG_FIX(NN, 128, 64, 4) SG_FIX(NN, 128, 64, 64)
        SG_FIX(NN, 128, 2, 64) SG_FIX(NN, 128, 1, 64) SG_FIX(NN, 4, 64, 128) SG_FIX(NN, 64, 64, 128)
            SG_FIX(TN, 4, 64, 128) SG_FIX(TN, 64, 64, 128) SG_FIX(TN, 64, 2, 128) SG_FIX(TN, 64, 1, 128)
                SG_FIX(NT, 128, 64, 64) SG_FIX(NT, 128, 64, 2) SG_FIX(NT, 128, 64, 1)
#undef SG_FIX
                    return nullptr;
}
#endif
#endif

/** One library's product for one shape: prepare() once (JIT, primitive), run() per call. */
struct Product {
    Shape s;
#if defined(SG_XSMM)
    libxsmm_smmfunction kernel = nullptr;
#elif defined(SG_EIGEN_FIXED)
    FixedFn fixed = nullptr;
#endif
    bool prepare() {
#if defined(SG_XSMM)
        // Row-major C[M,N] = A·B is column-major Cᵀ[N,M] = Bᵀ·Aᵀ: libxsmm's (m, n, k) = (N, M, K),
        // its A is our B and its B our A; a transposed stored operand sets the matching flag.
        libxsmm_blasint m = s.n, n = s.m, k = s.k, lda = ldb_of(s), ldb = lda_of(s), ldc = s.n;
        float alpha = 1, beta = 0;
        int flags = (s.form == NT ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (s.form == TN ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
        kernel = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
        return kernel != nullptr;
#elif defined(SG_EIGEN_FIXED)
        fixed = eigen_fixed_fn(s);
        return fixed != nullptr;
#else
        return true;
#endif
    }
    void run(const float *__restrict a, const float *__restrict b, float *__restrict c) const {
        const int M = s.m, N = s.n, K = s.k;
#if defined(SG_LOOP)
        if (s.form == NT) {
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    float acc = 0;
                    for (int k = 0; k < K; ++k) acc += a[(size_t)i * K + k] * b[(size_t)j * K + k];
                    c[(size_t)i * N + j] = acc;
                }
            return;
        }
        for (int i = 0; i < M; ++i) {
            float *ci = c + (size_t)i * N;
            for (int j = 0; j < N; ++j) ci[j] = 0;
            for (int k = 0; k < K; ++k) {
                float aik = s.form == TN ? a[(size_t)k * M + i] : a[(size_t)i * K + k];
                const float *bk = b + (size_t)k * N;
                for (int j = 0; j < N; ++j) ci[j] += aik * bk[j];
            }
        }
#elif defined(SG_OPENBLAS)
        cblas_sgemm(CblasRowMajor, s.form == TN ? CblasTrans : CblasNoTrans, s.form == NT ? CblasTrans : CblasNoTrans,
                    M, N, K, 1.0f, a, lda_of(s), b, ldb_of(s), 0.0f, c, N);
#elif defined(SG_BLIS)
        float one = 1, zero = 0;
        bli_sgemm(s.form == TN ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s.form == NT ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                  M, N, K, &one, const_cast<float *>(a), lda_of(s), 1, const_cast<float *>(b), ldb_of(s), 1, &zero, c,
                  N, 1);
#elif defined(SG_EIGEN_FIXED)
        fixed(a, b, c);
#elif defined(SG_EIGEN)
        Eigen::Map<Dyn> C(c, M, N);
        if (s.form == NN)
            C.noalias() = Eigen::Map<const Dyn>(a, M, K) * Eigen::Map<const Dyn>(b, K, N);
        else if (s.form == TN)
            C.noalias() = Eigen::Map<const Dyn>(a, K, M).transpose() * Eigen::Map<const Dyn>(b, K, N);
        else
            C.noalias() = Eigen::Map<const Dyn>(a, M, K) * Eigen::Map<const Dyn>(b, N, K).transpose();
#elif defined(SG_XSMM)
        kernel(b, a, c);
#elif defined(SG_DNNL)
        dnnl_sgemm(s.form == TN ? 'T' : 'N', s.form == NT ? 'T' : 'N', M, N, K, 1.0f, a, lda_of(s), b, ldb_of(s), 0.0f,
                   c, N);
#else
#error "define one of SG_LOOP SG_OPENBLAS SG_BLIS SG_EIGEN SG_XSMM SG_DNNL"
#endif
    }
};

float *alloc(size_t count) {
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    return static_cast<float *>(std::aligned_alloc(64, bytes ? bytes : 64));
}

/** Whether every element of c is within 2·γ_K·Σ|a||b| of the exact product. */
bool check(const Shape &s, const float *a, const float *b, const float *c) {
    const double u = std::ldexp(1.0, -24), gamma = s.k * u / (1 - s.k * u);
    for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
            double exact = 0, mag = 0;
            for (int k = 0; k < s.k; ++k) {
                double p = (double)a_at(s, a, i, k) * b_at(s, b, k, j);
                exact += p;
                mag += std::fabs(p);
            }
            if (std::fabs(c[(size_t)i * s.n + j] - exact) > 2 * gamma * mag) return false;
        }
    return true;
}

void bench(const char *label, const Shape &s) {
    Product p{s};
    if (!p.prepare()) {
        std::printf("%s\t%s\t%d\t%d\t%d\tn/a\tn/a\tn/a\tn/a\n", label, form_name(s.form), s.m, s.n, s.k);
        return;
    }
    float *a = alloc((size_t)s.m * s.k), *b = alloc((size_t)s.k * s.n), *c = alloc((size_t)s.m * s.n);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> d(-1, 1);
    for (size_t i = 0; i < (size_t)s.m * s.k; ++i) a[i] = d(rng);
    for (size_t i = 0; i < (size_t)s.k * s.n; ++i) b[i] = d(rng);
    std::memset(c, 0xff, sizeof(float) * s.m * s.n);  // NaNs: beta = 0 must overwrite them
    p.run(a, b, c);
    bool ok = check(s, a, b, c);
    double flop = 2.0 * s.m * s.n * s.k;
    // Calls per batch: about 0.2 ms of work at 20 flop/ns, at least 20.
    int calls = std::max(20, (int)(200e3 * 20 / flop));
    for (int i = 0; i < calls * 5; ++i) p.run(a, b, c);
    std::vector<double> per_call;
    for (int batch = 0; batch < 60; ++batch) {
        double t0 = now_ns();
        for (int i = 0; i < calls; ++i) {
            p.run(a, b, c);
            asm volatile("" : : "r"(c) : "memory");
        }
        per_call.push_back((now_ns() - t0) / calls);
    }
    std::sort(per_call.begin(), per_call.end());
    double best = per_call.front(), median = per_call[per_call.size() / 2];
    std::printf("%s\t%s\t%d\t%d\t%d\t%.1f\t%.1f\t%.2f\t%s\n", label, form_name(s.form), s.m, s.n, s.k, best, median,
                flop / best, ok ? "ok" : "WRONG");
    std::free(a), std::free(b), std::free(c);
}

// ---- FMA peak: 12 independent accumulator chains (latency 4 × 2 pipes < 12) ----------------
// The chains live in 12 named registers; an empty asm per chain keeps each one in its register
// and the loop from being folded, so the loop is 12 back-to-back FMAs on registers.
template <typename V, V (*Fma)(V, V, V), V (*Set)(float)>
double fma_flop_per_ns(int lanes) {
    V x = Set(0.999999f), y = Set(1e-7f);
    V a0 = Set(1), a1 = Set(2), a2 = Set(3), a3 = Set(4), a4 = Set(5), a5 = Set(6), a6 = Set(7), a7 = Set(8),
      a8 = Set(9), a9 = Set(10), a10 = Set(11), a11 = Set(12);
    const long iters = 200000;  // ~0.5 ms: short enough that some runs see no preemption
    double best = 0;
    for (int rep = 0; rep < 400; ++rep) {
        double t0 = now_ns();
        for (long it = 0; it < iters; ++it) {
#define SG_STEP(r)                                                                                                     \
    r = Fma(r, x, y);                                                                                                  \
    asm volatile("" : "+v"(r));
            SG_STEP(a0)
            SG_STEP(a1) SG_STEP(a2) SG_STEP(a3) SG_STEP(a4) SG_STEP(a5) SG_STEP(a6) SG_STEP(a7) SG_STEP(a8) SG_STEP(a9)
                SG_STEP(a10) SG_STEP(a11)
#undef SG_STEP
        }
        double t = now_ns() - t0;
        best = std::max(best, 12.0 * lanes * 2 * iters / t);
    }
    V sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
    if (reinterpret_cast<float *>(&sum)[0] == 12345) std::puts("");
    return best;
}
/** Core clock in GHz: a chain of dependent 1-cycle integer adds (8 per iteration). */
double clock_ghz() {
    double best = 0;
    for (int rep = 0; rep < 400; ++rep) {
        long v = 0;
        const long iters = 100000;
        double t0 = now_ns();
        for (long it = 0; it < iters; ++it)
            asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                         : "+r"(v));
        best = std::max(best, 8.0 * iters / (now_ns() - t0));
    }
    return best;
}
__m256 fma256(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
__m256 set256(float v) { return _mm256_set1_ps(v); }
#if defined(__AVX512F__)
__m512 fma512(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
__m512 set512(float v) { return _mm512_set1_ps(v); }
#endif

}  // namespace

int main(int argc, char **argv) {
    if (argc > 1 && std::strcmp(argv[1], "--peak") == 0) {
        std::printf("peak\tclock\t%.2f GHz\n", clock_ghz());
        std::printf("peak\tavx2\t%.2f flop/ns\n", fma_flop_per_ns<__m256, fma256, set256>(8));
#if defined(__AVX512F__)
        std::printf("peak\tavx512\t%.2f flop/ns\n", fma_flop_per_ns<__m512, fma512, set512>(16));
#endif
        return 0;
    }
    const char *label = argc > 1 ? argv[1] : "lib";
#if defined(SG_OPENBLAS)
    openblas_set_num_threads(1);
    std::fprintf(stderr, "openblas core: %s\n", openblas_get_corename());
#elif defined(SG_BLIS)
    bli_thread_set_num_threads(1);
    std::fprintf(stderr, "blis arch: %s\n", bli_arch_string(bli_arch_query_id()));
#elif defined(SG_XSMM)
    libxsmm_init();
    std::fprintf(stderr, "libxsmm target: %s\n", libxsmm_get_target_arch());
#endif
    for (const Shape &s : kShapes) bench(label, s);
    return 0;
}
