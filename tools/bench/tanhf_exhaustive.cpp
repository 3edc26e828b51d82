// tanhf_exhaustive — checks trl::tanh_f32 (runtime/trl_math.h) against a reference on all 2^32
// float bit patterns, and measures the margins that make it correctly rounded on any device.
//
// Build and run (about 3 min of CPU on one core; see the commit that last changed trl_math.h for
// the measured result line):
//   c++ -std=c++17 -O2 -ffp-contract=off -I runtime tools/bench/tanhf_exhaustive.cpp \
//       -lquadmath -o /tmp/tanhf_exhaustive && /tmp/tanhf_exhaustive
//
// Reference: tanhl (x87 long double, 64-bit significand) rounded to float.  That rounding is a
// double rounding, wrong only when tanhl's value lies within its own error of a midpoint between
// two floats; every input whose tanhl value is within 2^-56 (relative) of a midpoint is
// recomputed with libquadmath's tanhq (113-bit significand) and counted.
// Printed: mismatches (must be 0, for x and -x, NaN kept as NaN), glibc tanhf's mismatches for
// comparison, and per path of trl_math.h (expm1 below |x| = 1/4, exp from 1/4 to 9.5) the
// largest relative error of the double quotient before its rounding to float and the smallest
// relative distance of tanh(x) to a midpoint.  That distance must exceed the path's error bound
// (expm1: 3·2^-52; exp: (1/sinh(1/2) + 1.5)·2^-52, for any expm1 / exp of at most 1 ulp) for the
// device's expm1 and exp to give the same floats as the host's.
// Exit status 0 iff there is no mismatch and the margin holds.
#include <math.h>
#include <quadmath.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trl_math.h"

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint32_t to_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/** Relative distance of v (> 0) to the nearest midpoint between two adjacent floats. */
static long double midpoint_distance(long double v) {
    float f = (float)v;
    long double lo = ((long double)f + (long double)nextafterf(f, 0.0f)) / 2;
    long double hi = ((long double)f + (long double)nextafterf(f, INFINITY)) / 2;
    long double d = fminl(fabsl(v - lo), fabsl(v - hi));
    return d / v;
}

int main() {
    uint64_t checked = 0, bad = 0, glibc_bad = 0, quad_used = 0;
    long double max_quot_err[2] = {0, 0}, min_margin[2] = {1, 1};  // per path: expm1, exp
    uint32_t min_margin_bits[2] = {0, 0}, max_err_bits[2] = {0, 0};
    for (uint64_t u = 0; u <= 0x7fffffffu; ++u) {
        float x = from_bits((uint32_t)u);
        float ref;
        if (isnan(x)) {
            float y = trl::tanh_f32(x), ny = trl::tanh_f32(-x);
            if (!isnan(y) || !isnan(ny)) ++bad;
            checked += 2;
            continue;
        }
        long double L = tanhl((long double)x);
        if (x > 0 && L < 1 && midpoint_distance(L) < 0x1p-56L) {
            __float128 q = tanhq((__float128)x);
            ref = (float)q;
            ++quad_used;
        } else {
            ref = (float)L;
        }
        float y = trl::tanh_f32(x), ny = trl::tanh_f32(-x);
        if (to_bits(y) != to_bits(ref) || to_bits(ny) != to_bits(-ref)) {
            if (bad < 20) printf("MISMATCH x=%a tanh_f32=%a ref=%a\n", x, y, ref);
            ++bad;
        }
        if (to_bits(tanhf(x)) != to_bits(ref)) ++glibc_bad;
        checked += 2;
        // The two paths (same conditions as trl_math.h): quotient errors and margins.
        if (x >= 0x1p-12f && x <= 9.5f) {
            int p = x < 0.25f ? 0 : 1;
            long double q;
            if (p == 0) {
                double m = expm1(-2.0 * (double)x);
                q = (long double)(-m / (2.0 + m));
            } else {
                double e = exp(-2.0 * (double)x);
                q = (long double)((1.0 - e) / (1.0 + e));
            }
            long double err = fabsl(q - L) / L;
            if (err > max_quot_err[p]) max_quot_err[p] = err, max_err_bits[p] = (uint32_t)u;
            long double margin = midpoint_distance(L);
            if (margin < min_margin[p]) min_margin[p] = margin, min_margin_bits[p] = (uint32_t)u;
        }
    }
    printf("checked %llu inputs (all 2^32 bit patterns): %llu mismatches; glibc tanhf: %llu of "
           "2^31 non-negative inputs differ; tanhq used for %llu near-midpoint inputs\n",
           (unsigned long long)checked, (unsigned long long)bad, (unsigned long long)glibc_bad,
           (unsigned long long)quad_used);
    // Error bounds of the double quotient for a 1-ulp expm1 / exp (trl_math.h's comment).
    const long double bound[2] = {3.0L * 0x1p-52L,
                                  (1.0L / sinhl(0.5L) + 1.5L) * 0x1p-52L};
    const char *name[2] = {"expm1 path (2^-12 <= |x| < 1/4)", "exp path (1/4 <= |x| <= 9.5)"};
    bool margin_ok = true;
    for (int p = 0; p < 2; ++p) {
        printf("%s: max relative error of the double quotient 2^%.2f (x=%a); bound for a 1-ulp "
               "%s 2^%.2f\n",
               name[p], (double)log2l(max_quot_err[p]), from_bits(max_err_bits[p]),
               p ? "exp" : "expm1", (double)log2l(bound[p]));
        printf("%s: min relative distance of tanh(x) to a midpoint 2^%.2f (x=%a): %s the bound\n",
               name[p], (double)log2l(min_margin[p]), from_bits(min_margin_bits[p]),
               min_margin[p] > bound[p] ? "exceeds" : "DOES NOT exceed");
        margin_ok = margin_ok && min_margin[p] > bound[p];
    }
    return bad == 0 && margin_ok ? 0 : 1;
}
