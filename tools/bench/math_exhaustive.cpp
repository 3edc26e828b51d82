// math_exhaustive — measures the error of runtime/trl_math.h's f32 exp, log, tanh and sigmoid on
// all 2^32 float bit patterns, and checks that the vectorized loop gives the bits of the scalar
// call (the same IEEE operations in the same order, so it must).
//
// Build and run (one function per process, about 1 min of CPU each on one core; an optional
// second argument k checks only every k-th block of 2^16 patterns):
//   c++ -std=c++17 -O3 -march=native -ffp-contract=off -I runtime
//       tools/bench/math_exhaustive.cpp -o /tmp/math_exhaustive   (one command)
//   for f in exp log tanh sigmoid; do /tmp/math_exhaustive $f; done
//
// Reference: glibc's double exp / log / tanh (sigmoid: 1 / (1 + exp(-x)) for x ≥ 0, e^x /
// (1 + e^x) below), each < 1 ulp of a double, i.e. 2^-29 ulp of a float: far below the errors
// measured here.  Error unit: one ulp of the float binade of the exact value (2^(e-23) for a
// value in [2^e, 2^(e+1)), 2^-149 below 2^-126).  Where the reference rounds to ±inf or a NaN,
// the result must be that same float (NaN for NaN).
// Printed per function: the max ulp error and an input where it occurs, how many inputs are not
// the correctly rounded float, and mismatches of special values and of the vector loop (both
// must be 0; the exit status is 0 iff they are).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trl_math.h"

namespace {

float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
uint32_t to_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

double ref_exp(double x) { return exp(x); }
double ref_log(double x) { return log(x); }
double ref_tanh(double x) { return tanh(x); }
double ref_sigmoid(double x) {
    double e = exp(-fabs(x));
    return (x < 0 ? e : 1.0) / (1.0 + e);
}

/** Scalar calls, kept out of the vectorizer (noinline, no-tree-vectorize). */
#define SCALAR(NAME)                                                                                                   \
    __attribute__((noinline, optimize("no-tree-vectorize"))) float scalar_##NAME(float x) { return trl::NAME##_f32(x); }
SCALAR(exp)
SCALAR(log)
SCALAR(tanh)
SCALAR(sigmoid)

/** The loop that GCC vectorizes (check with -fopt-info-vec). */
#define LOOP(NAME)                                                                                                     \
    __attribute__((noinline)) void loop_##NAME(const float *x, float *y, int n) {                                      \
        for (int i = 0; i < n; ++i) y[i] = trl::NAME##_f32(x[i]);                                                      \
    }
LOOP(exp)
LOOP(log)
LOOP(tanh)
LOOP(sigmoid)

struct Fn {
    const char *name;
    float (*scalar)(float);
    void (*loop)(const float *, float *, int);
    double (*ref)(double);
};

/** One ulp of the float binade of the exact value v (finite). */
double ulp_of(double v) {
    double a = fabs(v);
    if (a < 0x1p-126) return 0x1p-149;
    int e;
    frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
    return ldexp(1.0, e - 24);
}

}  // namespace

int main(int argc, char **argv) {
    const Fn fns[] = {{"exp", scalar_exp, loop_exp, ref_exp},
                      {"log", scalar_log, loop_log, ref_log},
                      {"tanh", scalar_tanh, loop_tanh, ref_tanh},
                      {"sigmoid", scalar_sigmoid, loop_sigmoid, ref_sigmoid}};
    // Optional second argument k: only every k-th block of 2^16 patterns (a quick check).
    const uint64_t step = argc > 2 ? strtoull(argv[2], nullptr, 10) : 1;
    int status = 0;
    for (const Fn &fn : fns) {
        if (argc > 1 && strcmp(argv[1], fn.name) != 0) continue;
        const int B = 1 << 16;
        static float xs[1 << 16], ys[1 << 16];
        double max_err = 0, max_err_sub = 0;
        uint32_t max_at = 0, max_at_sub = 0;
        uint64_t not_cr = 0, special_bad = 0, vec_bad = 0;
        for (uint64_t base = 0; base <= 0xffffffffu; base += B * step) {
            for (int i = 0; i < B; ++i) xs[i] = from_bits(static_cast<uint32_t>(base + i));
            fn.loop(xs, ys, B);
            for (int i = 0; i < B; ++i) {
                float x = xs[i], y = ys[i];
                // The scalar call on every 16th input (all of them would double the run time).
                if ((i & 15) == 0 && to_bits(fn.scalar(x)) != to_bits(y)) {
                    if (vec_bad < 5) printf("  %s: vector != scalar at x=%a\n", fn.name, x);
                    ++vec_bad;
                }
                double r = fn.ref(static_cast<double>(x));
                float rf = static_cast<float>(r);
                if (isnan(r) || isinf(rf)) {
                    if (isnan(r) ? !isnan(y) : to_bits(y) != to_bits(rf)) {
                        if (special_bad < 5) printf("  %s: x=%a gives %a, want %a\n", fn.name, x, y, rf);
                        ++special_bad;
                    }
                    continue;
                }
                if (to_bits(y) != to_bits(rf)) ++not_cr;
                if (isinf(y) || isnan(y)) {
                    if (special_bad < 5) printf("  %s: x=%a gives %a, want %a\n", fn.name, x, y, rf);
                    ++special_bad;
                    continue;
                }
                double err = fabs(static_cast<double>(y) - r) / ulp_of(r);
                if (fabs(r) < 0x1p-126) {
                    if (err > max_err_sub) max_err_sub = err, max_at_sub = to_bits(x);
                } else if (err > max_err) {
                    max_err = err, max_at = to_bits(x);
                }
            }
        }
        printf("%s: max error %.3f ulp at x=%a (%.9g); results below 2^-126: %.3f ulp (of 2^-149) "
               "at x=%a; %llu of 2^32 not correctly rounded; special-value mismatches %llu; "
               "vector != scalar %llu\n",
               fn.name, max_err, from_bits(max_at), from_bits(max_at), max_err_sub, from_bits(max_at_sub),
               (unsigned long long)not_cr, (unsigned long long)special_bad, (unsigned long long)vec_bad);
        fflush(stdout);
        if (special_bad || vec_bad) status = 1;
    }
    return status;
}
