#pragma once
// trl_trig_accurate — the integer parts of trl_math_trig.h (included from there; not a public
// header): Payne–Hanek reduction of any finite double modulo π/2 in exact integer arithmetic,
// and the accurate phase of sin / cos in 256-bit fixed point.  Only 32×32→64-bit integer
// products (no __int128), so host and device compute the same bits.
//
// Fixed point ("fx"): 8 little-endian 32-bit limbs, limb 7 the integer part, one unit u = 2^-224;
// values in [0, 2); a product or a quotient by a small integer truncates (error < u).
//
// Payne–Hanek (reduce_exact): |x| = m·2^(e-52) with m < 2^53; with 2/π = Σ_{i≥1} b_i 2^-i,
// the bits b_i with i ≤ e - 54 give multiples of 4 in x·2/π and are skipped, so
// x·2/π ≡ m·F·2^sh (mod 4), F = 0.b_{i0} b_{i0+1} … (i0 = max(1, e - 53)), sh = e - 51 - i0 ≤ 2.
// F is read to 9 words (288 bits), the product m·F is exact (11 limbs), and k mod 4 and the
// fraction (224 bits) are read from it.  Error of the fraction f: < u (truncation of the
// product) + 2^(53+2-288) (truncation of F) < 1.002u.
//
// Accurate phase (accurate): r = |f|·π/2 (error ≤ 1.002u·π/2 + u/2 + u < 3.2u), then the
// Taylor series of sin r (r - r³/3! + …) or cos r (1 - r²/2! + …), each term from the previous
// by one product with r² and one division by n(n+1), until a term truncates to zero (≤ 28
// terms).  Counting the truncations term by term (each term's error ≤ 0.31·the previous one's
// + 6u/n(n+1) + 2u, ≤ 4.5u for the first and ≤ 1.9u after) the result Y has
// |Y - g(r)| ≤ 64u, g = sin or cos of the exact reduced argument; the code uses E = 256u =
// 2^-216.  Y ± E are rounded to nearest (on the bits); when both round alike that double is
// the correctly rounded result.  Since |sin r| ≥ 2^-62 (the double nearest a nonzero multiple of
// π/2 is 2^-60.9 away from it, and |x| ≥ 2^-27 where k = 0) and cos r ≥ 0.7, E is a relative
// error below 2^-154, far beyond the ~2^-120 that the hardest-to-round cases of sin and cos
// need; should the two roundings still differ, RN(Y) is returned.
#include <stdint.h>
#include <string.h>

#include "trl_trig_tables.h"

namespace trl {
namespace trig_detail {

/** The bits of a double and back: trl_dd.h's. */
using dd::bits;
using dd::from_bits;

/** 2^e for -1022 ≤ e ≤ 1023. */
TRL_HD inline double pow2(int e) { return from_bits(static_cast<uint64_t>(e + 1023) << 52); }

/** Bits p … p+63 of the n-limb little-endian integer a (bits outside [0, 32n) read as 0). */
TRL_HD inline uint64_t window64(const uint32_t *a, int n, int p) {
    int w = p >> 5, s = p & 31;  // p = 32w + s, w may be negative
    uint64_t l0 = (w >= 0 && w < n) ? a[w] : 0u;
    uint64_t l1 = (w + 1 >= 0 && w + 1 < n) ? a[w + 1] : 0u;
    uint64_t l2 = (w + 2 >= 0 && w + 2 < n) ? a[w + 2] : 0u;
    if (s == 0) return l0 | (l1 << 32);
    return (l0 >> s) | (l1 << (32 - s)) | (l2 << (64 - s));
}

/** The index of the highest set bit of the n-limb integer a (-1 when a == 0). */
TRL_HD inline int top_bit(const uint32_t *a, int n) {
    for (int i = n - 1; i >= 0; --i) {
        if (a[i] != 0u) {
            int b = 31;
            while (!((a[i] >> b) & 1u)) --b;
            return 32 * i + b;
        }
    }
    return -1;
}

const int FX = 8;  // limbs of a fixed-point number

/** c = a·b truncated to a multiple of u (c may alias neither a nor b). */
TRL_HD inline void fx_mul(const uint32_t *a, const uint32_t *b, uint32_t *c) {
    uint32_t p[2 * FX] = {};
    for (int i = 0; i < FX; ++i) {
        uint64_t carry = 0;
        for (int j = 0; j < FX; ++j) {
            uint64_t t = static_cast<uint64_t>(a[i]) * b[j] + p[i + j] + carry;
            p[i + j] = static_cast<uint32_t>(t);
            carry = t >> 32;
        }
        p[i + FX] = static_cast<uint32_t>(carry);
    }
    for (int i = 0; i < FX; ++i) c[i] = p[i + FX - 1];
}

/** a /= d, truncated (d < 2^32). */
TRL_HD inline void fx_div(uint32_t *a, uint32_t d) {
    uint64_t rem = 0;
    for (int i = FX - 1; i >= 0; --i) {
        uint64_t cur = (rem << 32) | a[i];
        a[i] = static_cast<uint32_t>(cur / d);
        rem = cur % d;
    }
}

/** a += b (sign = +1) or a -= b (sign = -1), modulo 2^256. */
TRL_HD inline void fx_addsub(uint32_t *a, const uint32_t *b, int sign) {
    uint64_t c = sign > 0 ? 0u : 1u;  // a - b = a + ~b + 1
    for (int i = 0; i < FX; ++i) {
        uint64_t t = static_cast<uint64_t>(a[i]) + (sign > 0 ? b[i] : ~b[i]) + c;
        a[i] = static_cast<uint32_t>(t);
        c = t >> 32;
    }
}

/** The fx value a (> 0) rounded to the nearest double, ties to even. */
TRL_HD inline double fx_round(const uint32_t *a) {
    int lb = top_bit(a, FX);
    if (lb < 53) return 0.0;  // not reached: the callers' values exceed 2^-100
    uint64_t m = window64(a, FX, lb - 52) & ((uint64_t(1) << 53) - 1);
    int rb = lb - 53;  // the round bit
    bool round = (a[rb >> 5] >> (rb & 31)) & 1u;
    bool sticky = (a[rb >> 5] & ((1u << (rb & 31)) - 1u)) != 0u;
    for (int i = 0; i < (rb >> 5); ++i) sticky = sticky || a[i] != 0u;
    m += (round && (sticky || (m & 1u))) ? 1u : 0u;  // m == 2^53 converts exactly too
    return static_cast<double>(m) * pow2(lb - 52 - 32 * (FX - 1));
}

/** Payne–Hanek: for finite ax ≥ 2^-27, k = the integer nearest ax·2/π (ties either way) and
 *  ax·2/π - k = ±f: returns k mod 4, sets *neg to the sign and f[] to |f| ∈ [0, 1/2] in fx
 *  (error < 1.002u, see the file comment). */
TRL_HD inline int reduce_exact(double ax, uint32_t *f, bool *neg) {
    const int L = 9;  // words of 2/π read
    const uint32_t *T = two_over_pi_words();
    uint64_t b = bits(ax);
    int e = static_cast<int>(b >> 52) - 1023;
    uint64_t m = (b & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);
    int i0 = e - 53 > 1 ? e - 53 : 1;
    int sh = e - 51 - i0;
    uint32_t F[L];  // little-endian: F[L-1] holds b_{i0} … b_{i0+31}
    for (int j = 0; j < L; ++j) {
        int p = i0 - 1 + 32 * j;
        uint64_t two = (static_cast<uint64_t>(T[p >> 5]) << 32) | T[(p >> 5) + 1];
        F[L - 1 - j] = static_cast<uint32_t>(two >> (32 - (p & 31)));
    }
    uint32_t Q[L + 2];  // m·F, exact
    uint64_t m0 = m & 0xffffffffu, m1 = m >> 32, c = 0;
    for (int i = 0; i < L; ++i) {
        uint64_t t = m0 * F[i] + c;
        Q[i] = static_cast<uint32_t>(t);
        c = t >> 32;
    }
    Q[L] = static_cast<uint32_t>(c);
    c = 0;
    for (int i = 0; i < L; ++i) {
        uint64_t t = m1 * F[i] + Q[i + 1] + c;
        Q[i + 1] = static_cast<uint32_t>(t);
        c = t >> 32;
    }
    Q[L + 1] = static_cast<uint32_t>(c);
    int P = 32 * L - sh;  // the binary point of m·F·2^sh in Q
    int q = static_cast<int>(window64(Q, L + 2, P) & 3u);
    for (int i = 0; i < FX - 1; ++i) f[i] = static_cast<uint32_t>(window64(Q, L + 2, P - 32 * (FX - 1 - i)));
    f[FX - 1] = 0;
    *neg = (f[FX - 2] >> 31) != 0u;
    if (*neg) {  // f ≥ 1/2: k + 1, and 1 - f
        q = (q + 1) & 3;
        uint64_t cy = 1;
        for (int i = 0; i < FX - 1; ++i) {
            uint64_t t = static_cast<uint64_t>(~f[i]) + cy;
            f[i] = static_cast<uint32_t>(t);
            cy = t >> 32;
        }
    }
    return q;
}

/** The accurate phase before its rounding, for finite |x| ≥ 2^-27: sets sum[] to
 *  |sin(x + off·π/2)| (off ∈ {0, 1}) in fx, within 64u (file comment); returns whether
 *  sin(x + off·π/2) is negative. */
TRL_HD inline bool accurate_fixed(double x, int off, uint32_t *sum) {
    bool neg;
    uint32_t f[FX], r[FX], r2[FX], term[FX], tmp[FX];
    int q = (reduce_exact(from_bits(bits(x) & ~(uint64_t(1) << 63)), f, &neg) + off) & 3;
    fx_mul(f, pio2_fixed(), r);  // |r| ≤ π/4
    fx_mul(r, r, r2);
    bool odd = q & 1;  // cos r, else sin r
    for (int i = 0; i < FX; ++i) term[i] = odd ? (i == FX - 1 ? 1u : 0u) : r[i];
    for (int i = 0; i < FX; ++i) sum[i] = term[i];
    for (uint32_t n = odd ? 1u : 2u, sign = 0;; n += 2, sign ^= 1u) {
        fx_mul(term, r2, tmp);
        fx_div(tmp, n * (n + 1));
        bool zero = true;
        for (int i = 0; i < FX; ++i) {
            term[i] = tmp[i];
            zero = zero && tmp[i] == 0u;
        }
        if (zero) break;
        fx_addsub(sum, term, sign ? 1 : -1);
    }
    bool negative = (q >= 2) != (!odd && neg);
    if (off == 0 && x < 0) negative = !negative;
    return negative;
}

/** sin(x + off·π/2), off ∈ {0, 1}, correctly rounded (the accurate phase; |x| ≥ 2^-27, finite). */
TRL_HD inline double accurate(double x, int off) {
    uint32_t sum[FX], tmp[FX];
    bool negative = accurate_fixed(x, off, sum);
    uint32_t e[FX] = {256u};  // E = 2^-216
    for (int i = 0; i < FX; ++i) tmp[i] = sum[i];
    fx_addsub(tmp, e, -1);
    double lo = fx_round(tmp);
    fx_addsub(tmp, e, 1);
    fx_addsub(tmp, e, 1);
    double y = fx_round(tmp);
    if (y != lo) y = fx_round(sum);  // not reached (see the file comment)
    return negative ? -y : y;
}

}  // namespace trig_detail
}  // namespace trl
