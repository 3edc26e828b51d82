#pragma once
// trl_math_pow — the correctly rounded f64 pow of trl_math_f64.h (include that one), with its
// exp and log pieces: x^y = e^(y·log x).
//   Fast phase: log|x| as a double-double (relative error ≤ 2^-66, trl_math_f64.h's log_fast),
//     z = y·log|x| (two_prod, error ≤ 2^-104·|z|), e^z by exp's fast phase with the double-double
//     argument; the rounding test uses eps = 2^-69 + |z|·2^-66·1.01 (|z| ≤ 745.2 past the
//     overflow/underflow cuts, so eps ≤ 2^-56.5; for |z| ≤ 1 about 2^-65.8).
//   Accurate phase: log|x| in triple-double (≤ 2^-137), z = y·log|x| (TD × double), e^z in TD: the
//     result to ≤ 2^-127 relative, rounded once (subnormals included).
//   Exact and midpoint results: Ziv's test cannot decide a result that is exactly a midpoint
//     between two doubles (x^y with exactly 54 significant bits, or an odd multiple of 2^-1075).
//     Such results need y = n/2^F with n > 0 and F ≤ 5 (Lauter & Lefèvre, "An efficient rounding
//     boundary test for pow(x, y) in double precision", IEEE TC 58(2), 2009).  Integer y in
//     (2, 64]: x = m·2^e with m odd, m^y computed exactly (doubles, the last product a two_prod)
//     while it fits, then rounded once with ties to even; x a power of two: 2^(e·y) directly when
//     e·y is an integer (2^-1075 is the tie that rounds to +0).  y = 2 is x*x (IEEE's own
//     rounding), y = 1 is x.  Non-integer y with 32·y an integer (y = 0.5, 1.5, 0.25, …): the
//     accurate phase snaps a value within 2^-118 of a midpoint onto it (ties to even); that a
//     non-midpoint x^y never comes that close is not proven for all x, y (no exhaustive worst-case
//     search for pow exists), so pow's correct rounding rests on the unit test and on the
//     probabilistic argument of Ziv's strategy for inputs outside those families.
// Special values as C99 F.9.4.4 / glibc: pow(x, ±0) = 1 for any x (NaN too); pow(1, y) = 1 for any
// y; pow(-1, ±inf) = 1; otherwise a NaN operand gives NaN; pow(x < 0 finite, non-integer y) = NaN;
// an odd integer y keeps x's sign (pow(-0, 3) = -0, pow(-inf, -3) = -0, pow(-0, -3) = -inf);
// pow(±0, y < 0) = +inf (±inf for odd y), pow(±0, y > 0) = +0 (±0 for odd y); |x| < 1: pow(x, -inf)
// = +inf, pow(x, +inf) = +0, |x| > 1 the reverse; pow(±inf, y) as 1/pow(±0, y); overflow gives
// ±inf, underflow correctly rounded subnormals or ±0.

namespace trl {
namespace f64_detail {

/** 0: y is not an integer, 1: an odd integer, 2: an even integer (y finite, nonzero). */
TRL_HD inline int integer_kind(double y) {
    uint64_t b = bits(y);
    int e = static_cast<int>((b >> 52) & 0x7ff) - 1023;
    if (e < 0) return 0;
    if (e > 52) return 2;
    uint64_t m = (b & 0x000fffffffffffffULL) | 0x0010000000000000ULL;
    if (m & ((1ULL << (52 - e)) - 1)) return 0;
    return (m >> (52 - e)) & 1 ? 1 : 2;
}

/** x^y correctly rounded for finite x > 0, x ≠ 1, finite y with 0 < |y| < 2^63 (int_y: y is an
 *  integer). */
#if TRL_OUTLINED
double pow_positive_outlined(double x, double y, bool int_y);
static inline double pow_positive(double x, double y, bool int_y) { return pow_positive_outlined(x, y, int_y); }
#else
TRL_HD inline double pow_positive(double x, double y, bool int_y) {
    int kadj = 0;
    if (x < 0x1p-1022) {
        x *= 0x1p52;
        kadj = -52;
    }
    uint64_t bx = bits(x);
    uint64_t mant = (bx & 0x000fffffffffffffULL) | 0x0010000000000000ULL;
    int ex = static_cast<int>(bx >> 52) - 1075 + kadj;  // x = mant · 2^ex
    if (mant == 0x0010000000000000ULL) {                // x = 2^(ex + 52): 2^(e·y) when e·y is an integer
        double e = ex + 52;
        DD z = dd::two_prod(e, y);
        if (z.lo == 0 && integer_kind(z.hi) != 0) {
            if (z.hi >= 1024) return inf_value();
            if (z.hi < -1074) return 0.0;  // also the tie 2^-1075, to even
            return scale(1.0, static_cast<int>(z.hi));
        }
    } else if (int_y && y > 2 && y <= 64) {
        // The odd part m of x: m^n exactly in doubles while it fits, the last product a two_prod.
        uint64_t low = mant & (~mant + 1);  // the lowest set bit
        int tz = static_cast<int>(bits(static_cast<double>(low)) >> 52) - 1023;
        double m = static_cast<double>(mant >> tz);
        int n = static_cast<int>(y);
        double p = m;
        int i = 1;
        for (; i < n - 1; i++) {
            DD q = dd::two_prod(p, m);
            if (q.lo != 0 || q.hi >= 0x1p53) break;
            p = q.hi;
        }
        if (i == n - 1) {  // m^n = q.hi + q.lo exactly; x^n = that · 2^(n·(ex + tz))
            DD q = dd::two_prod(p, m);
            int eq = static_cast<int>(bits(q.hi) >> 52) - 1023;
            long long k = static_cast<long long>(n) * (ex + tz) + eq;
            if (k > 1100) return inf_value();
            if (k < -1100) return 0.0;
            double s = pow2(-eq);
            return round_scaled(TD{q.hi * s, q.lo * s, 0.0}, static_cast<int>(k));
        }
    }
    LogRed R = log_reduce(x, kadj);
    DD L = log_fast(R.k, R.i, R.r);
    DD zp = dd::two_prod(y, L.hi);
    DD z = dd::fast_two_sum(zp.hi, zp.lo + y * L.lo);
    if (z.hi > 709.8) return inf_value();
    if (z.hi < -745.2) return 0.0;
    ExpRed e = exp_reduce(z.hi, z.lo);
    DD v = exp_table_mul(e.j, expm1_poly<false>(e.r));
    double az = z.hi < 0 ? -z.hi : z.hi;
    if (e.k > -1022 && rounds_to_hi(v.hi, v.lo, EPS_EXP + az * (EPS_LOG * 1.01))) return scale(v.hi, e.k);
    TD Lt = log_accurate(R.k, R.i, TD{R.r.hi, R.r.lo, 0.0});
    ExpAcc a = exp_accurate(dd::mul(Lt, y));
    bool snap = !int_y && y > 0 && integer_kind(y * 32) != 0;
    return round_scaled(exp_value(a), a.k, snap);
}
#endif  // TRL_OUTLINED

}  // namespace f64_detail

/** x^y correctly rounded (ties to even), with C99 Annex F's special values (see the file
 *  comment): pow(x, ±0) = 1, pow(1, y) = 1, pow(x < 0, non-integer) = NaN, odd integer y keeps
 *  the sign, y == 2 is x*x.  Example: pow_f64(2.0, 0.5) == 0x1.6a09e667f3bcdp+0. */
TRL_HD inline double pow_f64(double x, double y) {
    using namespace f64_detail;
    if (y == 0) return 1.0;
    if (x == 1.0) return 1.0;
    if (x != x || y != y) return x + y;
    if (y == 1.0) return x;
    if (y == 2.0) return x * x;
    double ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
    if (ay == inf_value()) {
        if (ax == 1.0) return 1.0;
        return (ax < 1.0) == (y > 0) ? 0.0 : inf_value();
    }
    int kind = integer_kind(y);
    bool neg = (bits(x) >> 63) != 0 && kind == 1;
    if (ax == 0 || ax == inf_value()) {
        double r = (ax == 0) == (y > 0) ? 0.0 : inf_value();
        return neg ? -r : r;
    }
    if (x < 0 && kind == 0) return nan_value();
    double r;
    if (ax == 1.0) {
        r = 1.0;
    } else if (ay >= 0x1p63) {  // |y·log x| ≥ 2^63·2^-53: overflow or underflow
        r = (ax < 1.0) == (y > 0) ? 0.0 : inf_value();
    } else {
        r = pow_positive(ax, y, kind != 0);
    }
    return neg ? -r : r;
}

}  // namespace trl
