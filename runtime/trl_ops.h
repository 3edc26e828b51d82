#pragma once
// trl_ops — the element kernels of trlc's elementwise operations, written once for the
// reference interpreter (compiler/interp/value.cpp compiles this header) and for every
// generated program (which includes it, host and device), so that both compute the same bits.
// Header-only, TRL_HD (host and device under nvcc).  The operation table
// compiler/ir/ops.def names, per operation and dtype, the function of this header (or of libm,
// or trl_math.h) that computes one element; the interpreter calls it, code generation emits a
// call of the same name.
//
// No libm transcendental: exp, log, log1p, sin, cos, tanh and pow are trl_math.h's; libm
// supplies only sqrt, fabs, floor, ceil and fmod, whose results IEEE 754 defines exactly.
//
// Semantics (dsl/README.md §5): f32 computes in float, f64 in double; `%` is floored (Python:
// -7 % 3 = 2, -7.5 % 2.0 = 0.5); min/max propagate NaN (numpy); relu and sign keep NaN.  The
// i32 kernels take and return `long long`: the caller checks the i32 range where an
// operation can leave it (negation, abs; the interpreter reports the error, generated code
// raises it with the source position), and tests a zero divisor before floordiv_i64/pmod_i64.
//
// Example: trl::pymod_f32(-7.5f, 2.0f) == 0.5f, trl::pmod_i64(-7, 3) == 2,
//          trl::floordiv_i64(-7, 2) == -4, trl::max_f32(1.0f, NAN) is NaN.
#include "trl_libm.h"

#include "trl_math.h"  // TRL_HD; the f32 and f64 transcendentals

namespace trl {

// ---- unary, f32 and f64 (negation is the C operator; exp, log, sin, … are trl_math.h's)
TRL_HD inline float relu_f32(float x) { return x != x ? x : (x > 0.0f ? x : 0.0f); }
TRL_HD inline double relu_f64(double x) { return x != x ? x : (x > 0.0 ? x : 0.0); }
TRL_HD inline float sign_f32(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
TRL_HD inline double sign_f64(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; }
TRL_HD inline double sigmoid_f64(double x) { return 1.0 / (1.0 + exp_f64(-x)); }
/** softplus(x) = log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)): no overflow for large x,
 *  NaN stays NaN, softplus(-inf) = 0.  f32 computes in double and rounds once (the double
 *  result is within a few double ulps, so the float is the correctly rounded one except within
 *  about 2^-50 of a rounding midpoint). */
TRL_HD inline double softplus_f64(double x) { return (x > 0.0 ? x : 0.0) + log1p_f64(exp_f64(-fabs(x))); }
TRL_HD inline float softplus_f32(float x) { return (float)softplus_f64((double)x); }

// ---- unary, i32 (in long long; negation and abs can leave the i32 range: the caller checks)
TRL_HD inline long long neg_i32(long long x) { return -x; }
TRL_HD inline long long abs_i32(long long x) { return x < 0 ? -x : x; }
TRL_HD inline long long relu_i32(long long x) { return x > 0 ? x : 0; }
TRL_HD inline long long sign_i32(long long x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
/** floor and ceil of an integer: the integer itself. */
TRL_HD inline long long same_i32(long long x) { return x; }

// ---- binary
/** Python's floored remainder: the result has the sign of b; fmod(a, 0) is NaN. */
TRL_HD inline float pymod_f32(float a, float b) {
    float r = fmodf(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
TRL_HD inline double pymod_f64(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
/** min/max that propagate NaN (numpy's minimum/maximum); on a tie the first operand. */
TRL_HD inline float min_f32(float x, float y) { return (x != x || y != y) ? (float)NAN : (y < x ? y : x); }
TRL_HD inline float max_f32(float x, float y) { return (x != x || y != y) ? (float)NAN : (y > x ? y : x); }
TRL_HD inline double min_f64(double x, double y) { return (x != x || y != y) ? (double)NAN : (y < x ? y : x); }
TRL_HD inline double max_f64(double x, double y) { return (x != x || y != y) ? (double)NAN : (y > x ? y : x); }

/** Integer min/max (index arithmetic and i32 elements). */
TRL_HD inline long long min_i64(long long a, long long b) { return a < b ? a : b; }
TRL_HD inline long long max_i64(long long a, long long b) { return a > b ? a : b; }
/** Floored remainder and quotient of integers (m, b != 0): pmod_i64(-7, 3) = 2,
 *  floordiv_i64(-7, 2) = -4. */
TRL_HD inline long long pmod_i64(long long a, long long m) {
    long long r = a % m;
    return r != 0 && ((r < 0) != (m < 0)) ? r + m : r;
}
TRL_HD inline long long floordiv_i64(long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/** Copies n values from stored bytes into a local (codegen's loads of a slice or a point):
 *  typed loads, a word at a time on the GPU (where a memcpy from a char pointer becomes byte
 *  loads), and vectorized on the host (__restrict: a local and the arena do not overlap; the
 *  element loop it replaces compiled to scalar moves). */
template <class T>
TRL_HD inline void copy_n(T *__restrict d, const T *__restrict s, long long n) {
    for (long long i = 0; i < n; ++i) d[i] = s[i];
}

/** The mean over the ranks of a data-parallel run (dsl/README.md §7.12): v holds "ranks"
 *  blocks of n values (rank r's at v + r·n); out[i] = (v[i] + v[n + i] + … ) / ranks, summed in
 *  rank order in T.  The one order of trl_allreduce_mean (runtime/rt/trl_dist.cpp) and of
 *  `trlc --interpret --ranks N` (compiler/interp/ranks.cpp).  out[0, n) must not overlap v. */
template <class T>
TRL_HD inline void rank_mean(const T *__restrict v, long long n, int ranks, T *__restrict out) {
    // Rank-major passes over out: each element still gets v0 + v1 + … in rank order and one
    // division (no reciprocal: x / 3 and x · (1/3) differ), but every pass is a unit-stride loop
    // the host compiler vectorizes (the element-major form compiled to scalar adds and divides:
    // 15 µs of PPO's 9,160 floats per update, measured with perf).
    const T nr = static_cast<T>(ranks);
    for (long long i = 0; i < n; ++i) out[i] = v[i];
    for (int r = 1; r < ranks; ++r) {
        const T *vr = v + static_cast<long long>(r) * n;
        for (long long i = 0; i < n; ++i) out[i] = out[i] + vr[i];
    }
    for (long long i = 0; i < n; ++i) out[i] = out[i] / nr;
}

}  // namespace trl
