#pragma once
// trl_math — the transcendentals of trlc.  This file: the f32 exp, log, tanh and sigmoid; at its
// end it includes the correctly rounded f64 functions (trl_math_f64.h: exp, log, log1p, tanh,
// pow; trl_math_trig.h: sin, cos) and defines the f32 sin, cos and pow through them.  The f32
// functions of this file are written in plain IEEE float arithmetic (+ - * /, comparisons,
// float<->int conversions and bit casts; no libm call), so that the reference interpreter, a
// host build and a CUDA build compute the same bits, and branch-free (selects, no early
// return), so that a loop `y[i] = trl::tanh_f32(x[i])` vectorizes
// (GCC -O3: 4, 8 or 16 floats at a time with SSE2, AVX2, AVX-512; -O2 when the trip count is
// a known multiple of the vector length).  Header-only, host and device (nvcc); included through
// trl_random.h by the interpreter and by every generated program.  Specification: dsl/README.md
// §5.x.  Example: trl::exp_f32(1.0f) == 0x1.5bf0a8p+1f (e rounded to nearest).
//
// Same bits everywhere needs every a * b + c to be two roundings: the generated host code builds
// with -ffp-contract=off, nvcc with -fmad=false, and the interpreter's x86-64 build has no FMA
// (a build with -march=haswell or on aarch64 must add -ffp-contract=off).  Division is IEEE
// (nvcc's default -prec-div=true), subnormals are kept (no -ftz, no -ffast-math).
//
// Max error over all 2^32 inputs (tools/bench/math_exhaustive.cpp, reference: glibc's double
// exp / log / tanh / exp-based sigmoid, whose own error, < 1 ulp of a double, is 2^-29 ulp of a
// float), in ulps of the exact value's float binade (2^-149 for values below 2^-126), and the
// share of inputs whose result is not the correctly rounded float:
//   exp_f32      0.990 ulp at x = 70.4030991 (0x1.199cc6p+6); subnormal results (x < -87.34):
//                0.750 ulp of 2^-149; 0.42 % not correctly rounded
//   log_f32      0.835 ulp at x = 1.40545952 (0x1.67cc32p+0); 0.31 %
//   tanh_f32     1.330 ulp at x = ±0.628309548 (0x1.41b1cap-1, just above the 0.625 switch to
//                the exp formula); 0.13 %
//   sigmoid_f32  2.402 ulp at x = -4.1572938 (-0x1.0a111ap+2, the e / (1 + e) side); 2.9 %
// (This header had a correctly rounded tanh before, through double expm1 / exp: about the
// instructions of the scalar tanh_f32, 4-5x those of the vectorized loop, and it vectorized
// nowhere; tools/bench/math_speed.cpp compares them.)
// Special values as libm: exp(NaN) = NaN, exp(+inf) = +inf, exp(-inf) = +0, exp overflows to
// +inf above 88.7228394 and underflows (through subnormals) to +0 below -103.97;
// log(+0) = log(-0) = -inf, log(x < 0) = NaN (a positive quiet NaN, 0x7fc00000), log(+inf) =
// +inf, log(NaN) = NaN; tanh is odd (tanh(±0) = ±0, tanh(±inf) = ±1, NaN kept);
// sigmoid(-inf) = +0, sigmoid(+inf) = 1, sigmoid(NaN) = NaN.
//
// How:
//   exp: x clamped to [-105, 89] on its bits, n = round(x / ln 2) (by adding 1.5·2^23 and
//        reading n from the sum's low bits, no float->int conversion), r = x - n·ln2 in two parts
//        (Cody–Waite: n·C1 exact, C1 with 9 bits), e^r on |r| ≤ 0.35 by Cephes' degree-7
//        polynomial 1 + r + r²·P(r), times 2^n as two exact powers of two 2^(n>>1)·2^(n-(n>>1))
//        (the second product is the one rounding, so overflow and subnormal results come out
//        as IEEE multiplication rounds them).
//   log: x = 2^k·m with m in [√2/2, √2) from the bits (subnormals scaled by 2^23 first),
//        f = m - 1 (exact), s = f / (2 + f), log(1+f) = f - (f²/2 - s·(f²/2 + R(s²))) with
//        fdlibm/FreeBSD e_logf.c's R (the branch-free form of its formula), plus k·ln2 in two
//        parts.
//   tanh: |x| < 0.625: x + x³·P(x²) (degree-5 P fitted for relative error, tools/bench/
//        math_fit.py); |x| ≥ 0.625: 1 - 2 / (e^2|x| + 1) (≥ 0.55, so no cancellation), with
//        exp_f32's arithmetic on 2|x| clamped to 19 (one exact scaling; the same bits as
//        exp_f32); the sign of x is put back with the bits.
//   sigmoid: e = exp_f32(-|x|) ∈ (0, 1], 1 / (1 + e) for x ≥ 0 and e / (1 + e) for x < 0 (no
//        overflow of exp, full accuracy down to the subnormals).
#include <stdint.h>
#include <string.h>

#ifndef TRL_HD
#if defined(__CUDACC__)
#define TRL_HD __host__ __device__
#else
#define TRL_HD
#endif
#endif

namespace trl {

namespace math_detail {

/** The bits of a float (IEEE binary32), and the float of 32 bits. */
TRL_HD inline uint32_t bits(float x) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__float_as_uint(x));
#else
    uint32_t b;
    memcpy(&b, &x, 4);
    return b;
#endif
}
TRL_HD inline float from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float x;
    memcpy(&x, &b, 4);
    return x;
#endif
}

/** c ? a : b as a blend of bits, for the special cases at the end of a function: a ternary
 *  there lets GCC move the whole computation into one arm of a branch, and with -ftrapping-math
 *  (the default) it does not if-convert arithmetic back out of a branch, so the loop would not
 *  vectorize. */
TRL_HD inline float blend(bool c, float a, float b) {
    uint32_t m = 0u - static_cast<uint32_t>(c);
    return from_bits((bits(a) & m) | (bits(b) & ~m));
}

/** e^r with r = x - n·ln 2, n = round(x·log2 e) (ties to even), for |x| ≤ 105: returns e^r
 *  ∈ [0.70, 1.42] and n in k. */
TRL_HD inline float exp_reduced(float x, int32_t &k) {
    // n by the 1.5·2^23 shift: t's low mantissa bits are n (|n| < 2^22), read without a
    // float->int conversion.
    float t = x * 1.44269504088896341f + 12582912.0f;
    float n = t - 12582912.0f;
    k = static_cast<int32_t>(bits(t) - 0x4b400000u);
    float r = x - n * 0.693359375f;  // exact: n·C1 has at most 17 bits, Sterbenz
    r = r - n * -2.12194440e-4f;     // C1 + C2 = ln 2 to 2^-36
    float z = r * r;
    float p = 1.9875691500e-4f;  // Cephes expf: (e^r - 1 - r) / r² on |r| ≤ ln2/2
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return (p * z + r) + 1.0f;
}

/** min(a, b) of two bit patterns as unsigned integers: a clamp of a float's magnitude without a
 *  float select (GCC forms an integer MIN_EXPR, which vectorizes). */
TRL_HD inline uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }

}  // namespace math_detail

/** e^x for f32 (max error 0.990 ulp, see the file comment); +inf above 88.72, +0 below -103.97,
 *  NaN kept. */
TRL_HD inline float exp_f32(float x) {
    using namespace math_detail;
    // Clamp to [-105, 89] (so that n fits the two scale factors) on the bits: the limit has x's
    // sign and exponent 0x85 or 0x84 (105 = 0x42d20000, 89 = 0x42b20000); a NaN becomes a limit
    // here and is put back at the end.
    uint32_t u = bits(x);
    float xc = from_bits(umin(u, (u & 0x80000000u) | (0x42b20000u + ((u >> 31) << 21))));
    int32_t k;  // [-151, 128]
    float y = exp_reduced(xc, k);
    int32_t k1 = k >> 1, k2 = k - k1;  // each in [-76, 64]: normal powers of two
    float s1 = from_bits(static_cast<uint32_t>(k1 + 127) << 23);
    float s2 = from_bits(static_cast<uint32_t>(k2 + 127) << 23);
    float e = (y * s1) * s2;  // y·s1 exact; ·s2 rounds once (overflow, subnormal)
    return blend(x != x, x, e);
}

/** log(x) (natural) for f32 (max error 0.835 ulp, see the file comment); -inf at ±0, NaN below
 *  0, +inf at +inf, NaN kept. */
TRL_HD inline float log_f32(float x) {
    using namespace math_detail;
    const float inf = from_bits(0x7f800000u);
    // Subnormals are scaled by 2^23 first.  A mask rather than a condition (GCC's jump threading
    // would turn a condition used twice into control flow that does not vectorize).  Inputs ≤ 0,
    // inf and NaN run through the same arithmetic (finite or NaN values, no undefined behaviour)
    // and are replaced at the end.
    uint32_t sub = static_cast<uint32_t>(static_cast<int32_t>(bits(x) - 0x00800000u) >> 31);
    float xs = x * from_bits(0x3f800000u + (sub & (23u << 23)));
    uint32_t ix = bits(xs);
    // k with m = xs·2^-k in [√2/2, √2): subtract the bits of √2/2 and keep the exponent field.
    int32_t k = static_cast<int32_t>(ix - 0x3f3504f3u) >> 23;
    float m = from_bits(ix - (static_cast<uint32_t>(k) << 23));
    float dk = static_cast<float>(k - static_cast<int32_t>(sub & 23u));
    float f = m - 1.0f;  // exact (Sterbenz), |f| ≤ 0.415
    float s = f / (2.0f + f);
    float z = s * s, w = z * z;
    // fdlibm / FreeBSD e_logf.c: |(log(1+s) - log(1-s)) / s - 2 - R(z)| < 2^-34.24.
    float t1 = w * (0.40000972152f + w * 0.24279078841f);
    float t2 = z * (0.66666662693f + w * 0.28498786688f);
    float R = t2 + t1;
    float hfsq = 0.5f * f * f;
    float l = dk * 6.9313812256e-01f - ((hfsq - (s * (hfsq + R) + dk * 9.0580006145e-06f)) - f);
    l = blend(x < inf, l, x);                           // +inf, NaN
    l = blend(x == 0.0f, -inf, l);                      // ±0
    return blend(x < 0.0f, from_bits(0x7fc00000u), l);  // negative, -inf
}

/** tanh(x) for f32 (max error 1.330 ulp, see the file comment); odd, ±1 at ±inf, NaN kept. */
TRL_HD inline float tanh_f32(float x) {
    using namespace math_detail;
    uint32_t sign = bits(x) & 0x80000000u;
    float a = from_bits(bits(x) & 0x7fffffffu);
    float z = a * a;
    float p = 0x1.18e1ep-9f;  // tanh(a) ≈ a + a³·P(a²) on [0, 0.625], relative error 2^-28.5
    p = p * z + -0x1.0bf4fep-7f;
    p = p * z + 0x1.638b58p-6f;
    p = p * z + -0x1.b9ee9p-5f;
    p = p * z + 0x1.111066p-3f;
    p = p * z + -0x1.555554p-2f;
    float small = a + a * (z * p);
    // e^2|x| for |x| ≥ 0.625 with 2|x| clamped to 19 (tanh rounds to 1 from 9.5 on; NaN is
    // clamped too and takes the polynomial's NaN below): n in [2, 28], one exact scaling.
    int32_t k;
    float y = exp_reduced(from_bits(umin(bits(a + a), 0x41980000u)), k);
    float e = y * from_bits(static_cast<uint32_t>(k + 127) << 23);
    float big = 1.0f - 2.0f / (e + 1.0f);
    float r = blend(a >= 0.625f, big, small);  // NaN: small is NaN
    return from_bits(bits(r) | sign);
}

/** 1 / (1 + e^-x) for f32 (max error 2.402 ulp, see the file comment); NaN kept. */
TRL_HD inline float sigmoid_f32(float x) {
    using math_detail::blend;
    float e = exp_f32(-(x < 0.0f ? -x : x));  // e^-|x| ∈ [0, 1]
    return blend(x < 0.0f, e, 1.0f) / (1.0f + e);
}

}  // namespace trl

// The f64 functions, correctly rounded (exp, log, log1p, tanh, pow; sin, cos), and the f32
// sin, cos and pow computed through them.
#include "trl_math_f64.h"
#include "trl_math_trig.h"

namespace trl {

/** sin(x) and cos(x) for f32: the correctly rounded f64 value of the float argument, rounded to
 *  float (two roundings: the float is the correctly rounded one unless the double lands exactly
 *  on a float rounding midpoint; the same bits on every target). */
TRL_HD inline float sin_f32(float x) { return static_cast<float>(sin_f64(static_cast<double>(x))); }
TRL_HD inline float cos_f32(float x) { return static_cast<float>(cos_f64(static_cast<double>(x))); }

/** x^y for f32: pow_f64 of the float arguments, rounded to float (as sin_f32); x ** 2 is
 *  x * x rounded once (the double product is exact). */
TRL_HD inline float pow_f32(float x, float y) {
    return static_cast<float>(pow_f64(static_cast<double>(x), static_cast<double>(y)));
}

}  // namespace trl
