// fma_peak.cpp — this core's float32 fused multiply-add throughput, in GFLOP/s (one thread).
//
// What it measures: the most float32 FLOPs one core can retire per second, the ceiling that
// tools/bench/ppo_vs_peer.py divides each arm's useful FLOP rate by ("share of the FMA peak").
// Each FMA counts as 2 FLOPs (a multiply and an add) per lane.  The loop keeps NCHAIN
// independent accumulator vectors, acc[j] = acc[j] * m + c, so no FMA waits for another: with
// latency L cycles and P FMA pipes a core needs L · P chains in flight (4 · 2 = 8 on Zen 4/5 and
// Skylake-SP); 12 leaves headroom and still fits in the 16 (AVX2) or 32 (AVX-512) registers.
// The compiler may not reassociate or fold the chains (no -ffast-math), so the loop body is
// exactly NCHAIN FMAs per iteration.  m is slightly below 1 and c small, so the accumulators
// converge to c / (1 - m) and never overflow or go subnormal.
//
// It measures each vector width the build's ISA has (-march=native: 512 bits with AVX-512F, 256
// and 128 with FMA; a build without FMA fails, by design), repeats each measurement REPS times and keeps the best (other
// processes on a loaded machine only ever make a repetition slower; short repetitions, 2 ms by
// default, are likely to run between two preemptions), and prints one JSON line:
//
//   {"widths": {"512": 166.1, "256": 83.0, "128": 41.5}, "peak_gflops": 166.1, "chains": 12,
//    "seconds_per_rep": 0.002}
//
// peak_gflops is the widest width's number.  Build and run (ppo_vs_peer.py does this itself):
//
//   c++ -O3 -march=native -o fma_peak tools/bench/fma_peak.cpp && taskset -c 1 ./fma_peak
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#if !defined(__FMA__)
#error "fma_peak.cpp needs an FMA ISA: build with -march=native (or -mfma)"
#endif

namespace {

constexpr int NCHAIN = 12;  // independent accumulators (see the header)
constexpr int REPS = 300;   // repetitions per width; the best one is kept

volatile float g_m = 0.999999f, g_c = 1e-7f;  // volatile: unknown to the optimizer
volatile float g_sink;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// iters × NCHAIN FMAs on the accumulators acc[0..NCHAIN), held in registers (named locals:
// an indexed array may live on the stack, which puts a store-to-load forward into every chain).
template <typename V, V (*Fma)(V, V, V)>
__attribute__((noinline)) void chains(long iters, V m, V c, V *acc) {
#define FMA_PEAK_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define FMA_PEAK_LOAD(j) V a##j = acc[j];
#define FMA_PEAK_STEP(j) a##j = Fma(a##j, m, c);
#define FMA_PEAK_STORE(j) acc[j] = a##j;
    static_assert(NCHAIN == 12, "FMA_PEAK_CHAINS names NCHAIN accumulators");
    FMA_PEAK_CHAINS(FMA_PEAK_LOAD)
    for (long i = 0; i < iters; ++i) {
        FMA_PEAK_CHAINS(FMA_PEAK_STEP)
    }
    FMA_PEAK_CHAINS(FMA_PEAK_STORE)
}

// One width: V is the vector type, LANES its float lanes, set/fma/sum the intrinsics.  Returns
// the best GFLOP/s over REPS runs of about `target_s` seconds each.
template <typename V, int LANES, V (*Set1)(float), V (*Fma)(V, V, V), float (*Sum)(V)>
double measure(double target_s) {
    V m = Set1(g_m), c = Set1(g_c);
    V acc[NCHAIN];
    for (int j = 0; j < NCHAIN; ++j) acc[j] = Set1(static_cast<float>(j) * 1e-3f);
    // Calibrate the iteration count so one repetition lasts about target_s.
    long iters = 1 << 16;
    for (;;) {
        auto t0 = std::chrono::steady_clock::now();
        chains<V, Fma>(iters, m, c, acc);
        if (seconds_since(t0) > target_s / 8) break;
        iters *= 2;
    }
    iters *= 8;
    double best = 0;
    for (int r = 0; r < REPS; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        chains<V, Fma>(iters, m, c, acc);
        double s = seconds_since(t0);
        double gflops = 2.0 * LANES * NCHAIN * static_cast<double>(iters) / s / 1e9;
        if (gflops > best) best = gflops;
    }
    float total = 0;
    for (int j = 0; j < NCHAIN; ++j) total += Sum(acc[j]);
    g_sink = total;  // keeps the chains live
    return best;
}

#if defined(__AVX512F__)
__m512 set512(float x) { return _mm512_set1_ps(x); }
__m512 fma512(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
float sum512(__m512 a) {
    alignas(64) float v[16];
    _mm512_store_ps(v, a);
    float s = 0;
    for (float x : v) s += x;
    return s;
}
#endif
#if defined(__FMA__)
__m256 set256(float x) { return _mm256_set1_ps(x); }
__m256 fma256(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
float sum256(__m256 a) {
    alignas(32) float v[8];
    _mm256_store_ps(v, a);
    float s = 0;
    for (float x : v) s += x;
    return s;
}
__m128 set128(float x) { return _mm_set1_ps(x); }
__m128 fma128(__m128 a, __m128 b, __m128 c) { return _mm_fmadd_ps(a, b, c); }
float sum128(__m128 a) {
    alignas(16) float v[4];
    _mm_store_ps(v, a);
    return v[0] + v[1] + v[2] + v[3];
}
#endif

}  // namespace

int main(int argc, char **argv) {
    double target_s = argc > 1 ? std::atof(argv[1]) : 0.002;  // seconds per repetition
    double peak = 0;
    std::printf("{\"widths\": {");
    const char *sep = "";
#if defined(__AVX512F__)
    double w512 = measure<__m512, 16, set512, fma512, sum512>(target_s);
    std::printf("%s\"512\": %.1f", sep, w512);
    sep = ", ";
    if (w512 > peak) peak = w512;
#endif
#if defined(__FMA__)
    double w256 = measure<__m256, 8, set256, fma256, sum256>(target_s);
    double w128 = measure<__m128, 4, set128, fma128, sum128>(target_s);
    std::printf("%s\"256\": %.1f, \"128\": %.1f", sep, w256, w128);
    sep = ", ";
    if (w256 > peak) peak = w256;
    if (w128 > peak) peak = w128;
#endif
    (void)sep;
    std::printf("}, \"peak_gflops\": %.1f, \"chains\": %d, \"seconds_per_rep\": %g}\n", peak, NCHAIN, target_s);
    return 0;
}
