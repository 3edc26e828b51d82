#pragma once
// trl_math_trig — correctly rounded (round to nearest, ties to even) f64 sine and cosine for
// trlc, in plain IEEE double arithmetic (+ - * /, comparisons, int<->double conversions, bit
// casts, integer ops, table lookups; no libm call, no fma), so that a host build, the reference
// interpreter and a CUDA build (-fmad=false) compute the same bits, and agree with glibc's
// sin / cos wherever glibc is correctly rounded.  Header-only, host and device (nvcc).
// Example: trl::sin_f64(1.0) == 0x1.aed548f090ceep-1, trl::cos_f64(0x1.921fb54442d18p+0) ==
// 0x1.1a62633145c07p-54 (the double nearest π/2).
//
// Same bits everywhere needs every a * b + c to be two roundings (as trl_dd.h): the generated
// host code builds with -ffp-contract=off, nvcc with -fmad=false.
//
// Special values: sin(±0) = ±0; |x| < 2^-27: sin x = x (|sin x - x| < x³/6 < 2^-54.6|x|, less
// than half the gap below |x| even at a power of two), cos x = 1 (1 - cos x < 2^-55 < half the
// gap below 1); ±inf, NaN → NaN.  No result is subnormal (|sin x| > 2^-63 for |x| ≥ 2^-27).
//
// Method (Ziv's strategy, as CRlibm): a fast phase that gives y = yh + yl with a proven error
// bound, a rounding test, and an accurate phase for the rare inputs whose test fails.
//   Reduction, x = k·π/2 + r, |r| ≤ π/4 (+2^-30), q = (k + off) mod 4 (cos x = sin(x + π/2)):
//   - |x| < 1.6e6 (|k| < 2^20): Cody–Waite, π/2 = P1 + P2 + P3 + P4 (P1, P2, P3 of ≤ 32
//     significant bits, so k·Pi is exact; |π/2 - ΣPi| < 2^-159.8).  x - k·P1 is exact (both
//     multiples of ulp(x), result below 2|x|), two_sum adds -k·P2 and -k·P3 exactly, -k·P4
//     (≤ 2^-83) and the low parts are added in double: |r - (rh + rl)| ≤ (|k| + 1)·2^-154 +
//     2^-104|r|.  Because the absolute term is divided by |r| in the end, the closest doubles
//     to multiples of π/2 (|r| ≥ 2^-61) only make the rounding test more cautious.
//   - larger |x|: Payne–Hanek in integers (trl_trig_accurate.h), the fraction f (224 bits)
//     rounded to a double-double and multiplied by π/2 (double-double): relative error
//     ≤ 2^-105 + 2^-103.2 + 2^-106 < 2^-102.5.
//   Fast phase, y ≈ sin(|r|) (q even) or cos(|r|) (q odd): a = i/256 nearest |r| (i ≤ 201),
//   |r| = a + t exactly with t = tH + tL (|t| ≤ 2^-9), and with (A, B) = (sin a, cos a) or
//   (cos a, -sin a) from a table of double-doubles,
//       g(a + t) = A + B·t + A·C(t) + B·t·S(t),  C = cos t - 1,  S = sin t / t - 1,
//   C and S by their Taylor polynomials (to t⁶, truncation < 2^-87, 2^-90) in double on
//   t² ≈ tH² + 2tH·tL (relative error ≤ 2.01·2^-53); A + B·t in double-double (two_prod).
//   Error of y relative to g(|r|): C is within 4.01·2^-53·t²/2 and S within 5.01·2^-53·t²/6;
//   A·C and B·t·S round 3 and 4 times more; |A·C/g| ≤ 2^-18 (sin: a ≥ 2^-8, a + t ≥ a/2;
//   cos: ≥ 0.704), |B·t/g| ≤ 1.01, so the double terms contribute ≤ 2^-18·7.01·2^-53 +
//   1.01·9.01·2^-53·2^-20.58 < 2^-67.8; the table (2^-106), the double-double product (7·2^-106)
//   and the final sums (exact Fast2Sums but for two additions of parts ≤ 2^-52|y|) < 2^-101.
//   With the reduction: |yh + yl - sin/cos(x)| ≤ 2^-67.8|yh| + (|k| + 1)·2^-154 (+ 2^-100|yh|).
//   Rounding test: yh is the answer when |yl| + that bound is below half the gap from yh to its
//   neighbour towards yl (a quarter ulp(yh) when yh is a power of two and yl < 0).  The code
//   uses 2^-67.5 for 2^-67.8 + 2^-100 with margin for the rounding of the test itself.
//   Accurate phase (trl_trig_accurate.h): Payne–Hanek on every |x|, sin / cos of r in 256-bit
//   fixed point, error ≤ 2^-216 absolute (≤ 2^-154 relative), rounded on its bits.  It runs
//   for about 1 input in 12000-14000 (random arguments over all exponents, or |x| < 100).
//
// Sources: J.-M. Muller, Elementary Functions (3rd ed., 2016), chapters 11 (Cody–Waite,
// Payne–Hanek; the worst case 6381956970095103·2^797, |r| ≈ 2^-60.9) and 12 (Ziv's strategy,
// rounding test); CRlibm's documentation (the table-based sin / cos fast phase); the tables and
// constants are computed with MPFR (tools/bench/trig_tables.c).
#include <stdint.h>

#include "trl_dd.h"
#include "trl_trig_accurate.h"
#include "trl_trig_tables.h"

namespace trl {
namespace trig_detail {

/** sin(x + off·π/2), off ∈ {0, 1}, correctly rounded (see the file comment). */
#if TRL_OUTLINED
double sin_quadrant_outlined(double x, int off);
static inline double sin_quadrant(double x, int off) { return sin_quadrant_outlined(x, off); }
#else
TRL_HD inline double sin_quadrant(double x, int off) {
    using dd::DD;
    uint64_t ax = bits(x) & ~(uint64_t(1) << 63);
    if (ax < 0x3e40000000000000u) return off ? 1.0 : x;  // |x| < 2^-27
    if (ax >= 0x7ff0000000000000u) return x - x;         // inf, NaN → NaN
    DD r;
    int q;
    double err_abs;
    bool flip = false;               // negate the result (odd sin of a negative x on the Payne–Hanek path)
    if (ax < 0x41386a0000000000u) {  // |x| < 1.6e6: Cody–Waite
        double kd = (x * 0x1.45f306dc9c883p-1 + 0x1.8p52) - 0x1.8p52;
        q = (static_cast<int>(kd) + off) & 3;
        double s1 = x - kd * 0x1.921fb544p+0;  // exact
        DD t = dd::two_sum(s1, -(kd * 0x1.0b4611a6p-34));
        DD v = dd::two_sum(t.hi, -(kd * 0x1.3198a2ep-69));
        r = dd::two_sum(v.hi, (t.lo + v.lo) - kd * 0x1.b839a252049c1p-104);
        err_abs = ((kd < 0 ? -kd : kd) + 1.0) * 0x1p-154;
    } else {  // Payne–Hanek
        uint32_t f[FX];
        bool neg;
        q = (reduce_exact(from_bits(ax), f, &neg) + off) & 3;
        int lb = top_bit(f, FX);  // ≥ 162: f ≥ 2^-62
        uint64_t mask = (uint64_t(1) << 53) - 1;
        double fh = static_cast<double>(window64(f, FX, lb - 52) & mask) * pow2(lb - 52 - 224);
        double fl = static_cast<double>(window64(f, FX, lb - 105) & mask) * pow2(lb - 105 - 224);
        r = dd::mul(dd::fast_two_sum(fh, fl), DD{0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54});
        if (neg) r = DD{-r.hi, -r.lo};
        err_abs = 0.0;
        flip = off == 0 && x < 0;
    }
    // |r| = a + t, a = i/256.
    double sg = r.hi < 0 ? -1.0 : 1.0;
    double a = r.hi * sg;
    int i = static_cast<int>(a * 256.0 + 0.5);
    DD t = dd::two_sum(a - i * 0x1p-8, r.lo * sg);  // the subtraction is exact (Sterbenz)
    int odd = q & 1;
    const double *e = sincos_table() + 4 * i;
    double Ah = e[2 * odd], Al = e[2 * odd + 1];  // sin a, or cos a
    double bs = odd ? -1.0 : 1.0;
    double Bh = bs * e[2 - 2 * odd], Bl = bs * e[3 - 2 * odd];  // cos a, or -sin a
    double t2 = t.hi * t.hi + 2.0 * t.hi * t.lo;
    double S = t2 * (-0x1.5555555555555p-3 + t2 * (0x1.1111111111111p-7 + t2 * -0x1.a01a01a01a01ap-13));
    double C = t2 * (-0.5 + t2 * (0x1.5555555555555p-5 + t2 * -0x1.6c16c16c16c17p-10));
    double small = Ah * C + (Bh * t.hi) * S;
    DD p = dd::mul(DD{Bh, Bl}, t);
    DD s = dd::fast_two_sum(Ah, p.hi);  // |Ah| ≥ |p.hi| or Ah == 0
    DD v = dd::fast_two_sum(s.hi, small);
    DD y = dd::fast_two_sum(v.hi, v.lo + ((s.lo + Al) + p.lo));
    // Rounding test (y.hi > 2^-63 > 0): half the gap towards y.lo, less |y.lo|, against the bound.
    uint64_t hb = bits(y.hi);
    double g = from_bits((hb & 0x7ff0000000000000u) - (uint64_t(53) << 52));  // ulp(y.hi) / 2
    if ((hb & 0x000fffffffffffffu) == 0 && y.lo < 0) g *= 0.5;
    if (g - (y.lo < 0 ? -y.lo : y.lo) <= y.hi * 0x1.6a09e667f3bcdp-68 + err_abs) return accurate(x, off);
    bool negative = (q >= 2) != (!odd && r.hi < 0);
    return (negative != flip) ? -y.hi : y.hi;
}
#endif  // TRL_OUTLINED

}  // namespace trig_detail

/** sin(x) correctly rounded (round to nearest even) for every double; same bits on host and
 *  device.  sin(±0) = ±0, sin(±inf) = sin(NaN) = NaN.  Method and error bounds: file comment. */
TRL_HD inline double sin_f64(double x) { return trig_detail::sin_quadrant(x, 0); }

/** cos(x) correctly rounded (round to nearest even) for every double; same bits on host and
 *  device.  cos(±0) = 1, cos(±inf) = cos(NaN) = NaN.  Method and error bounds: file comment. */
TRL_HD inline double cos_f64(double x) { return trig_detail::sin_quadrant(x, 1); }

}  // namespace trl
