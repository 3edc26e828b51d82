#pragma once
// trl_math_f64 — correctly rounded (round to nearest, ties to even) f64 exp, log, log1p, tanh
// and pow (trl_math_pow.h, included at the end), in plain IEEE double arithmetic (+ - * /,
// comparisons, int<->double conversions, bit casts, table lookups; no libm call, no fma), so
// that the reference interpreter, a host build (-ffp-contract=off) and a CUDA build
// (-fmad=false) compute the same bits, and agree with glibc wherever glibc is correctly rounded
// (the RL environments stay bit-exact with gymnasium).  Header-only, host and device (nvcc).
// Example: trl::exp_f64(1.0) == 0x1.5bf0a8b145769p+1 (e rounded to nearest).
//
// Method (Ziv's strategy, as CRlibm): a fast phase in double-double gives hi + lo with a
// relative error bound eps; when every value within eps·|hi| of hi + lo rounds to hi
// (rounds_to_hi), hi is the result; otherwise (about eps·2^54 of the inputs: < 0.1 %) an accurate
// phase in triple-double (trl_dd.h's TD, out of line) computes the value to ~2^-130 and rounds it exactly
// (round3 / round_scaled: the sticky low part decides ties, the subnormal range is rounded on
// its own 2^-1074 grid, never twice).
//   exp:   x = (128·k + j)·ln2/128 + r, n = 128k + j = round(x·128/ln2), r by Cody–Waite with ln2/128
//          in 35 + 35 + 53 + 53 bits (n·L1, n·L2 exact), |r| ≤ 2^-8.52; e^x = 2^k · 2^(j/128) ·
//          (1 + p(r)) with a 128-entry table of 2^(j/128) in triple-double (Tang's method).
//          Fast: p(r) = r + r²/2 + r³·(1/6 + … + r⁴/7!) in double; error budget: r²/2 rounded
//          ≤ 2^-71.1, r³ term ≤ 2^-79, its sum ≤ 2^-79.4, truncation r^8/8! ≤ 2^-83.5, table and
//          reduction ≤ 2^-103: ≤ 2^-70.8 relative (measured max 2^-72.0 over 2·10^5 inputs),
//          tested against EPS_EXP = 2^-69.  (tanh squares r exactly, two_prod: ≤ 2^-78.)
//          Accurate: Taylor to r^12/12! (truncation 2^-143) in TD Horner: ≤ 2^-135.
//   log:   x = 2^k·z, z in [0.686, 1.372) (bits), i = 7 bits of z, c_i ≈ 1/z of 20 bits (c = 1 on
//          [1 - 2^-7/3, 1 + 2^-7/3), so that no table term cancels near 1), r = z·c - 1 exact in
//          double-double (z split 33 + 20 bits), |r| ≤ 2^-8; log x = k·ln2 - log(c_i) + log1p(r).
//          Fast: r - r²/2 (two_prod) + r³·(1/3 - … + r⁶/9) in double: r³ term error ≤ 2^-68.6 of
//          the result (2^-76.6 absolute, up to 2.5x relative where -log(c) and log1p(r) partly
//          cancel), truncation 2^-74.7, k·ln2 and table ≤ 2^-84: ≤ 2^-67.5 (measured max 2^-68.2),
//          tested against EPS_LOG = 2^-66.  Accurate: log1p series to r^17 (truncation 2^-140) in TD: ≤ 2^-137.
//   log1p: |x| < 2^-54: x; |x| < 2^-7/3: r = x exactly (k = 0, c = 1); otherwise 1 + x = u + v
//          (2Sum) and log1p(x) = log(u) + the term v·c·2^-k added to r (two_prod in the accurate
//          phase): log's bounds.
//   tanh:  |x| < 2^-27: x (x³/3 is below half an ulp); |x| ≥ 22: ±1; between: E = e^2|x| - 1 with
//          exp's reduction as (T_j·2^k - 1) + 2^k·T_j·p(r) (the first difference exact, so no
//          cancellation beyond E's own size: error ≤ 2^-68.5 of E), tanh = E / (E + 2) in
//          double-double (≤ 2^-100), tested against EPS_TANH = 2^-66; accurate: the same in TD with
//          a TD division (two Newton corrections).
// The error bounds are paper bounds (term-by-term, documented above and at each constant), not
// machine-checked proofs (Gappa).  The accurate phases are enough for exp and log: the hardest
// cases known for them (Lefèvre–Muller's exhaustive searches) need about 2^-(53+64) or less,
// far from 2^-130; a value this close to a midpoint would be rounded by the TD value's sign of
// error, so any still harder case would show up as a mismatch with MPFR in the unit test
// (test/unit/math_f64_test.cpp, which checks every result bit for bit against MPFR).
//
// Special values as C99 Annex F / glibc: exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = +0,
// overflow to +inf above 709.782712893384, results below 2^-1022 correctly rounded subnormals,
// +0 below -745.1332191019412; log(±0) = -inf, log(x < 0) = NaN (the positive quiet NaN
// 0x7ff8000000000000 on every side), log(+inf) = +inf, log(1) = +0; log1p(-1) = -inf,
// log1p(x < -1) = NaN, log1p(±0) = ±0; tanh odd, tanh(±0) = ±0, tanh(±inf) = ±1; NaN in, NaN out.
//
// Same bits everywhere needs every a * b + c to round twice: host code builds with
// -ffp-contract=off (or for an x86-64 target without FMA), nvcc with -fmad=false.  Sources:
// P. T. P. Tang, "Table-driven implementation of the exponential function in IEEE floating-point
// arithmetic", ACM TOMS 15 (1989); A. Ziv, "Fast evaluation of elementary mathematical functions
// with correctly rounded last bit", ACM TOMS 17 (1991); F. de Dinechin, C. Lauter, J.-M. Muller,
// CRlibm documentation (2006) and C. Lauter, "Basic building blocks for a triple-double
// intermediate format" (RR-5702, 2005); the tables are printed by tools/bench/math_f64_tables.cpp.
#include <stdint.h>
#include <string.h>

#include "trl_dd.h"
#include "trl_math_f64_tables.h"

namespace trl {
namespace f64_detail {

using dd::DD;
using dd::TD;

/** The bits of a double and back: trl_dd.h's. */
using dd::bits;
using dd::from_bits;

/** The accurate phases stay out of line: they run for a few calls in 10^4, and inlined they
 *  would crowd the fast path. */
#if defined(__CUDACC__)
#define TRL_MATH_COLD __noinline__
#else
#define TRL_MATH_COLD __attribute__((noinline, cold))
#endif

constexpr double SHIFT = 0x1.8p52;  // x + SHIFT - SHIFT rounds x (|x| < 2^51) to an integer
constexpr double EPS_EXP = 0x1p-69;
constexpr double EPS_LOG = 0x1p-66;
constexpr double EPS_TANH = 0x1p-66;

/** +inf, and the positive quiet NaN (the same bits on host and device). */
TRL_HD inline double inf_value() { return from_bits(0x7ff0000000000000ULL); }
TRL_HD inline double nan_value() { return from_bits(0x7ff8000000000000ULL); }

/** 2^e for -1022 ≤ e ≤ 1023. */
TRL_HD inline double pow2(int e) { return from_bits(static_cast<uint64_t>(e + 1023) << 52); }

/** x · 2^k, exact when the result is normal, ±inf when it overflows; |k| ≤ 2044. */
TRL_HD inline double scale(double x, int k) {
    int a = k / 2;
    return x * pow2(a) * pow2(k - a);
}

/** Half the distance from h (|h| ≥ 2^-968) to its neighbour on the side of d's sign (d == 0: the
 *  smaller of the two). */
TRL_HD inline double half_gap(double h, double d) {
    uint64_t b = bits(h);
    double g = from_bits((b & 0x7ff0000000000000ULL) - (53ULL << 52));  // ulp(h) / 2
    if ((b & 0x000fffffffffffffULL) == 0 && (d == 0 || (h > 0) != (d > 0))) g *= 0.5;
    return g;
}

/** Whether every v with |v - (h + l)| ≤ eps·|h| rounds to h ((h, l) normalized, |h| ≥ 2^-968):
 *  Ziv's rounding test of the fast phases (the smaller half gap at a power of two). */
TRL_HD inline bool rounds_to_hi(double h, double l, double eps) {
    double ah = h < 0 ? -h : h, al = l < 0 ? -l : l;
    return al + eps * ah < half_gap(h, 0.0);
}

/** RN(v.hi + v.mi + v.lo) for a renormalized TD (|v.hi| ≥ 2^-968): hi + mi is a double-double,
 *  lo only decides when mi is exactly half a gap.  snap: a value within 2^-118 of a midpoint is
 *  that midpoint (pow's exact midpoints, whose TD value is only within 2^-128 of them). */
TRL_HD inline double round3(TD v, bool snap = false) {
    DD s = dd::fast_two_sum(v.hi, v.mi);
    double h = s.hi, m = s.lo;
    if (m == 0) return h;
    double g = half_gap(h, m), am = m < 0 ? -m : m, ah = h < 0 ? -h : h;
    double d = (m - (m > 0 ? g : -g)) + v.lo;  // from the midpoint (the difference is exact)
    if (snap && (d < 0 ? -d : d) <= ah * 0x1p-118) return h + (m > 0 ? g : -g);  // a tie: to even
    if (am != g || v.lo == 0) return h;
    return (v.lo > 0) == (m > 0) ? h + 2 * m : h;
}

/** RN(v · 2^k) for a positive TD v in [0.5, 4), |k| ≤ 2040, including the subnormal range
 *  (rounded once, on the 2^-1074 grid: v·2^(k+1074) + 2^52 rounded to an integer). */
TRL_HD TRL_MATH_COLD inline double round_scaled(TD v, int k, bool snap = false) {
    if (k > -1022) return scale(round3(v, snap), k);
    if (k < -1078) return 0.0;
    double s = pow2(k + 1074);
    TD w = {v.hi * s, v.mi * s, v.lo * s};  // exact: the grid is now the integers
    if (w.hi > 0x1p52) return round3(w, snap) * 0x1p-1074;
    return (round3(dd::add(w, 0x1p52), snap) - 0x1p52) * 0x1p-1074;
}

// ---- exp ----------------------------------------------------------------------------------------

/** z = (128k + j)·ln2/128 + r, r = rh + rl as a double-double. */
struct ExpRed {
    double nd;
    int k, j;
    DD r;
};

/** The reduction of zh + zl (|zh| < 746, |zl| ≤ ulp(zh)): error ≤ 2^-112 absolute. */
TRL_HD inline ExpRed exp_reduce(double zh, double zl) {
    double nd = (zh * INV_L + SHIFT) - SHIFT;
    long long n = static_cast<long long>(nd);
    int j = static_cast<int>(n & 127);
    int k = static_cast<int>((n - j) / 128);
    double a = zh - nd * L1;  // exact (n·L1 exact, Sterbenz)
    DD r = dd::two_sum(a, -(nd * L2));
    r = dd::two_sum(r.hi, r.lo + (zl - nd * L3));
    return {nd, k, j, r};
}

/** e^r - 1 for |r| ≤ 2^-8.53 as a double-double.  exact_square (tanh): r² by two_prod, absolute
 *  error ≤ 2^-78 and ≤ 2^-70·|r|; otherwise (exp, pow) r² in double, absolute error ≤ 2^-70.5. */
template <bool exact_square>
TRL_HD inline DD expm1_poly(DD r) {
    constexpr double C3 = 1.0 / 6, C4 = 1.0 / 24, C5 = 1.0 / 120, C6 = 1.0 / 720, C7 = 1.0 / 5040;
    double x = r.hi;
    DD sq = exact_square ? dd::two_prod(x, x) : DD{x * x, 0.0};
    double p = sq.hi * x * (C3 + x * (C4 + x * (C5 + x * (C6 + x * C7))));
    DD s = dd::fast_two_sum(x, 0.5 * sq.hi);
    double low = s.lo + (r.lo + ((0.5 * sq.lo + x * r.lo) + p));
    return dd::fast_two_sum(s.hi, low);
}

/** 2^(j/128) · (1 + e) as a double-double (relative error ≤ 2^-103 beyond e's). */
TRL_HD inline DD exp_table_mul(int j, DD e) {
    const double *T = exp_table() + 3 * j;
    DD p = dd::two_prod(T[0], e.hi);
    double pl = p.lo + (T[0] * e.lo + T[1] * e.hi);
    DD s = dd::fast_two_sum(T[0], p.hi);
    return dd::fast_two_sum(s.hi, s.lo + (T[1] + pl));
}

/** e^z = 2^k · t · (1 + p), t = 2^(j/128) and p = e^r - 1 in triple-double. */
struct ExpAcc {
    TD t, p;
    int k;
};

/** The accurate phase of exp for a TD argument (|z| < 746): p to ≤ 2^-140 absolute. */
#if TRL_OUTLINED
ExpAcc exp_accurate_outlined(TD z);
static inline ExpAcc exp_accurate(TD z) { return exp_accurate_outlined(z); }
#else
TRL_HD TRL_MATH_COLD inline ExpAcc exp_accurate(TD z) {
    ExpRed e = exp_reduce(z.hi, 0.0);
    double nd = e.nd;
    DD c = dd::two_prod(nd, L3);
    TD r = dd::renorm(z.hi - nd * L1, -(nd * L2), z.mi);  // all three exact
    r = dd::add(r, z.lo);
    r = dd::add(r, -c.hi);
    r = dd::add(r, -c.lo);
    r = dd::add(r, -(nd * L4));
    const double *C = exp_coef();
    TD p = {C[36], C[37], C[38]};
    for (int i = 11; i >= 1; i--) p = dd::add(dd::mul(p, r), TD{C[3 * i], C[3 * i + 1], C[3 * i + 2]});
    p = dd::mul(p, r);
    const double *T = exp_table() + 3 * e.j;
    return {{T[0], T[1], T[2]}, p, e.k};
}
#endif  // TRL_OUTLINED

/** t · (1 + p). */
TRL_HD TRL_MATH_COLD inline TD exp_value(const ExpAcc &a) { return dd::add(a.t, dd::mul(a.t, a.p)); }

// ---- log ----------------------------------------------------------------------------------------

/** x = 2^k·z, r = z·c_i - 1 exactly (a double-double). */
struct LogRed {
    int k, i;
    double c;
    DD r;
};

/** The reduction of a positive normal x (kadj: the exponent of a prior scaling). */
TRL_HD inline LogRed log_reduce(double x, int kadj) {
    uint64_t ix = bits(x);
    uint64_t tmp = ix - LOG_OFF;
    int i = static_cast<int>((tmp >> 45) & 127);
    int k = static_cast<int>(static_cast<int64_t>(tmp) >> 52) + kadj;
    uint64_t iz = ix - (tmp & 0xfff0000000000000ULL);
    double z = from_bits(iz);
    double zh = from_bits(iz & ~0xfffffULL);  // 33 bits: zh·c exact
    double c = log_table()[4 * i];
    DD r = dd::two_sum(zh * c - 1.0, (z - zh) * c);
    return {k, i, c, r};
}

/** log1p(r) for |r| ≤ 2^-8 as a double-double: error ≤ 2^-68.6·|log1p(r)| + 2^-80·|r|. */
TRL_HD inline DD log1p_poly(DD r) {
    constexpr double C3 = 1.0 / 3, C4 = -1.0 / 4, C5 = 1.0 / 5, C6 = -1.0 / 6, C7 = 1.0 / 7, C8 = -1.0 / 8,
                     C9 = 1.0 / 9;
    double x = r.hi;
    DD sq = dd::two_prod(x, x);
    double p = x * x * x * (C3 + x * (C4 + x * (C5 + x * (C6 + x * (C7 + x * (C8 + x * C9))))));
    DD s = dd::fast_two_sum(x, -0.5 * sq.hi);
    double rl = r.lo * (1.0 - x * (1.0 - x));  // r.lo's share of r - r²/2 + r³/3
    double low = s.lo + (rl + (p - 0.5 * sq.lo));
    return dd::fast_two_sum(s.hi, low);
}

/** The fast phase of log: k·ln2 - log(c_i) + log1p(r). */
TRL_HD inline DD log_fast(int k, int i, DD r) {
    const double *T = log_table() + 4 * i;
    DD q = log1p_poly(r);
    double kd = k;
    DD s = dd::two_sum(kd * LN2A, T[1]);
    DD t = dd::two_sum(s.hi, q.hi);
    double low = (s.lo + t.lo) + (q.lo + (T[2] + kd * LN2B));
    return dd::fast_two_sum(t.hi, low);
}

/** The accurate phase of log: error ≤ 2^-137 relative. */
#if TRL_OUTLINED
TD log_accurate_outlined(int k, int i, TD r);
static inline TD log_accurate(int k, int i, TD r) { return log_accurate_outlined(k, i, r); }
#else
TRL_HD TRL_MATH_COLD inline TD log_accurate(int k, int i, TD r) {
    const double *C = log_coef();
    TD p = {C[48], C[49], C[50]};
    for (int j = 15; j >= 0; j--) p = dd::add(dd::mul(p, r), TD{C[3 * j], C[3 * j + 1], C[3 * j + 2]});
    p = dd::mul(p, r);
    const double *T = log_table() + 4 * i;
    double kd = k;
    DD b = dd::two_prod(kd, LN2B);
    TD K = dd::renorm(kd * LN2A, b.hi, b.lo + kd * LN2C);
    return dd::add(dd::add(K, TD{T[1], T[2], T[3]}), p);
}
#endif  // TRL_OUTLINED

/** log of positive normal x with its reduction done, both phases. */
TRL_HD inline double log_finish(const LogRed &R) {
    DD v = log_fast(R.k, R.i, R.r);
    if (rounds_to_hi(v.hi, v.lo, EPS_LOG)) return v.hi;
    return round3(log_accurate(R.k, R.i, TD{R.r.hi, R.r.lo, 0.0}));
}

}  // namespace f64_detail

/** e^x correctly rounded (ties to even), subnormal results included; +inf above
 *  709.782712893384, +0 below -745.1332191019412, NaN kept.
 *  Example: exp_f64(1.0) == 0x1.5bf0a8b145769p+1. */
TRL_HD inline double exp_f64(double x) {
    using namespace f64_detail;
    if (!(x < 709.8)) return x != x ? x + x : inf_value();
    if (x < -745.2) return 0.0;
    double ax = x < 0 ? -x : x;
    if (ax < 0x1p-54) return 1.0 + x;
    ExpRed e = exp_reduce(x, 0.0);
    DD v = exp_table_mul(e.j, expm1_poly<false>(e.r));
    if (e.k > -1022 && rounds_to_hi(v.hi, v.lo, EPS_EXP)) return scale(v.hi, e.k);
    ExpAcc a = exp_accurate(TD{x, 0.0, 0.0});
    return round_scaled(exp_value(a), a.k);
}

/** The natural logarithm correctly rounded: log(±0) = -inf, log(x < 0) = NaN, log(+inf) = +inf,
 *  log(1) = +0, subnormal x included.  Example: log_f64(2.0) == 0x1.62e42fefa39efp-1. */
TRL_HD inline double log_f64(double x) {
    using namespace f64_detail;
    uint64_t ix = bits(x);
    int kadj = 0;
    if (ix - 0x0010000000000000ULL >= 0x7fe0000000000000ULL) {  // not a positive normal
        if (x != x) return x + x;
        if (x == 0) return -inf_value();
        if (x < 0) return nan_value();
        if (x == inf_value()) return x;
        x *= 0x1p52;  // subnormal
        kadj = -52;
    }
    if (x == 1.0) return 0.0;
    return log_finish(log_reduce(x, kadj));
}

/** log(1 + x) correctly rounded: x itself for |x| < 2^-54, log1p(-1) = -inf, NaN below -1,
 *  log1p(+inf) = +inf.  Example: log1p_f64(0x1p-30) == 0x1.fffffffcp-31. */
TRL_HD inline double log1p_f64(double x) {
    using namespace f64_detail;
    if (!(x > -1.0)) return x != x ? x + x : (x == -1.0 ? -inf_value() : nan_value());
    if (x == inf_value()) return x;
    double ax = x < 0 ? -x : x;
    if (ax < 0x1p-54) return x;
    if (ax < 0x1.555p-9) return log_finish(LogRed{0, 80, 1.0, DD{x, 0.0}});  // r = x (c = 1)
    DD u = dd::two_sum(1.0, x);
    LogRed R = log_reduce(u.hi, 0);
    if (u.lo == 0) return log_finish(R);
    // log(u.hi + u.lo): u.lo·c·2^-k joins r.
    DD w = dd::two_prod(u.lo, R.c);
    DD r = dd::add(R.r, scale(w.hi, -R.k));
    DD v = log_fast(R.k, R.i, r);
    if (rounds_to_hi(v.hi, v.lo, EPS_LOG)) return v.hi;
    TD rt = dd::add(TD{R.r.hi, R.r.lo, 0.0}, TD{scale(w.hi, -R.k), scale(w.lo, -R.k), 0.0});
    return round3(log_accurate(R.k, R.i, rt));
}

/** The hyperbolic tangent correctly rounded: odd, x itself for |x| < 2^-27, ±1 for |x| ≥ 22 (and
 *  from 19.07 on, by rounding), NaN kept.  Example: tanh_f64(1.0) == 0x1.85efab514f394p-1. */
TRL_HD inline double tanh_f64(double x) {
    using namespace f64_detail;
    double ax = x < 0 ? -x : x;
    if (!(ax < 22.0)) return x != x ? x + x : (x < 0 ? -1.0 : 1.0);
    if (ax < 0x1p-27) return x;
    double a = 2 * ax;
    ExpRed e = exp_reduce(a, 0.0);
    DD em = expm1_poly<true>(e.r);
    const double *T = exp_table() + 3 * e.j;
    double sk = pow2(e.k);  // 0 ≤ k ≤ 64
    // E = e^a - 1 = (T·2^k - 1) + 2^k·(Tm + T·em), the first difference exact.
    DD p = dd::two_prod(T[0], em.hi);
    DD P = dd::two_sum(p.hi, (p.lo + (T[0] * em.lo + T[1] * em.hi)) + T[1]);
    DD E = dd::add(dd::two_sum(T[0] * sk, -1.0), DD{P.hi * sk, P.lo * sk});
    DD D = dd::add(E, 2.0);
    double q1 = E.hi / D.hi;
    DD qd = dd::two_prod(q1, D.hi);
    double q2 = ((((E.hi - qd.hi) - qd.lo) + E.lo) - q1 * D.lo) / D.hi;
    DD Q = dd::fast_two_sum(q1, q2);
    if (rounds_to_hi(Q.hi, Q.lo, EPS_TANH)) return x < 0 ? -Q.hi : Q.hi;
    // Accurate: the same in triple-double, E / D by two corrections.
    ExpAcc A = exp_accurate(TD{a, 0.0, 0.0});
    TD Tk = {A.t.hi * sk, A.t.mi * sk, A.t.lo * sk};
    TD Et = dd::add(dd::add(Tk, -1.0), dd::mul(Tk, A.p));
    TD Dt = dd::add(Et, 2.0);
    double t1 = Et.hi / Dt.hi;
    TD R = dd::add(Et, dd::mul(Dt, -t1));
    double t2 = R.hi / Dt.hi;
    R = dd::add(R, dd::mul(Dt, -t2));
    double t3 = R.hi / Dt.hi;
    double y = round3(dd::renorm(t1, t2, t3));
    return x < 0 ? -y : y;
}

}  // namespace trl

#include "trl_math_pow.h"
