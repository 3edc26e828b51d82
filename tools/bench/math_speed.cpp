// math_speed — ns per element of runtime/trl_math.h's f32 exp, log, tanh and sigmoid in a loop
// over an array (vectorized by the compiler) and called one at a time (kept scalar), next to
// glibc's expf / logf / tanhf, 1 / (1 + expf(-x)), and the correctly rounded tanh that
// trl_math.h had before (double expm1 / exp, branchy).
//
// Build and run (a few seconds; process CPU time, so a loaded machine inflates the numbers less):
//   c++ -std=c++17 -O3 -march=native -ffp-contract=off -I runtime tools/bench/math_speed.cpp
//       -o /tmp/math_speed && /tmp/math_speed   (one command)
// (-O2 without -march: the flags of a generated program's host build today.)
// Inputs: 4096 floats (they stay in L1) uniform in [-6, 6] (log: in (0, 12]), each loop run
// until it has used 0.2 s of CPU; the result is the best of 3 such runs.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "trl_math.h"

namespace {

/** The correctly rounded tanh that trl_math.h had before (for the comparison). */
float old_tanh_f32(float x) {
    float a = fabsf(x);
    if (!(a >= 0x1p-12f)) return x;
    if (a > 9.5f) return x > 0.0f ? 1.0f : -1.0f;
    float r;
    if (a < 0.25f) {
        double m = expm1(-2.0 * static_cast<double>(a));
        r = static_cast<float>(-m / (2.0 + m));
    } else {
        double e = exp(-2.0 * static_cast<double>(a));
        r = static_cast<float>((1.0 - e) / (1.0 + e));
    }
    return x > 0.0f ? r : -r;
}

const int N = 4096;
float xs[N], xpos[N], ys[N];

double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/** ns per element of run(x, y) over N elements, the best of 3 runs of 0.2 s each. */
template <class F>
double time_loop(F run, const float *x) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        long iters = 0;
        double t0 = cpu_seconds(), t1;
        do {
            for (int k = 0; k < 50; ++k) run(x, ys);
            iters += 50;
            t1 = cpu_seconds();
        } while (t1 - t0 < 0.2);
        double ns = (t1 - t0) * 1e9 / (static_cast<double>(iters) * N);
        if (ns < best) best = ns;
    }
    return best;
}

#define VEC(NAME, EXPR)                                                                                                \
    __attribute__((noinline)) void NAME(const float *x, float *y) {                                                    \
        for (int i = 0; i < N; ++i) y[i] = EXPR(x[i]);                                                                 \
    }
#define SCAL(NAME, EXPR)                                                                                               \
    __attribute__((noinline, optimize("no-tree-vectorize"))) void NAME(const float *x, float *y) {                     \
        for (int i = 0; i < N; ++i) y[i] = EXPR(x[i]);                                                                 \
    }
float libm_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

VEC(v_exp, trl::exp_f32)
VEC(v_log, trl::log_f32)
VEC(v_tanh, trl::tanh_f32)
VEC(v_sigmoid, trl::sigmoid_f32)
SCAL(s_exp, trl::exp_f32)
SCAL(s_log, trl::log_f32)
SCAL(s_tanh, trl::tanh_f32)
SCAL(s_sigmoid, trl::sigmoid_f32)
SCAL(g_exp, expf)
SCAL(g_log, logf)
SCAL(g_tanh, tanhf)
SCAL(g_sigmoid, libm_sigmoid)
SCAL(old_tanh, old_tanh_f32)

}  // namespace

int main() {
    uint32_t s = 12345;
    for (int i = 0; i < N; ++i) {
        s = s * 1664525u + 1013904223u;
        float u = static_cast<float>(s >> 8) * 0x1p-24f;  // [0, 1)
        xs[i] = 12.0f * u - 6.0f;
        xpos[i] = 12.0f * (1.0f - u);  // (0, 12]
    }
    struct Row {
        const char *name;
        void (*vec)(const float *, float *), (*scal)(const float *, float *), (*glibc)(const float *, float *);
        const float *x;
    } rows[] = {{"exp", v_exp, s_exp, g_exp, xs},
                {"log", v_log, s_log, g_log, xpos},
                {"tanh", v_tanh, s_tanh, g_tanh, xs},
                {"sigmoid", v_sigmoid, s_sigmoid, g_sigmoid, xs}};
    printf("%-8s %12s %12s %12s   (ns per element)\n", "", "trl loop", "trl scalar", "glibc");
    for (const Row &r : rows)
        printf("%-8s %12.2f %12.2f %12.2f\n", r.name, time_loop(r.vec, r.x), time_loop(r.scal, r.x),
               time_loop(r.glibc, r.x));
    printf("%-8s %12s %12s %12.2f   (the correctly rounded tanh trl_math.h had before)\n", "old tanh", "", "",
           time_loop(old_tanh, xs));
    return 0;
}
