#pragma once
// trl_math — math functions whose bits trlc fixes itself instead of taking them from libm, so
// that the reference interpreter, a host build and a CUDA build compute the same value.
// Header-only, host and device (nvcc); included through trl_random.h by the interpreter and by
// every generated program.  The specification is dsl/README.md §5.x.
//
// tanh_f32(x): tanh of a float, correctly rounded (round to nearest even) for every one of the
// 2^32 float inputs.  glibc 2.36's tanhf is one ulp off on 59,337,157 of the 2^31 non-negative
// floats (28 % of a 300k-point sample of a policy's inputs), and it dominated a PPO run's
// profile (tanhf + expm1f: 64 % of the cycles).
//   |x| < 2^-12 (also ±0, subnormals) and NaN: x itself (|tanh x - x| < |x|^3/3 < half an ulp)
//   |x| > 9.5 (also ±inf): ±1 (1 - tanh|x| < 2 e^-19 < 2^-25, half an ulp below 1)
//   2^-12 <= |x| < 1/4, in double: m = expm1(-2|x|) ∈ (-1, 0), tanh|x| = -m / (2 + m), rounded
//   once to float, sign of x restored.
//   1/4 <= |x| <= 9.5, in double: e = exp(-2|x|) ∈ (0, 0.61), tanh|x| = (1 - e) / (1 + e),
//   rounded once to float, sign restored (exp is about twice as fast as expm1; below 1/4 the
//   cancellation in 1 - e would eat the margin).
// Why every input rounds correctly: -2|x| is exact in double.  expm1 path: with an expm1 of at
// most 1 ulp error (glibc: < 1 ulp; CUDA's double expm1: 1 ulp, CUDA C Programming Guide) the
// quotient has a relative error below 3·2^-52 (|m / (2 + m)| ≤ 1, so m's error passes through
// the sum at most once, plus the rounding of the sum and of the quotient).  exp path: with an
// exp of at most 1 ulp error (glibc: < 1 ulp; CUDA's double exp: 1 ulp), a relative error δ of
// e changes the quotient by δ·2e/(1 - e²) = δ/sinh(2|x|) ≤ 1.919·2^-52 for |x| ≥ 1/4, plus the
// roundings of the difference, the sum and the quotient (3·2^-53): below 3.42·2^-52 = 2^-50.23.
// The exhaustive check (tools/bench/tanhf_exhaustive.cpp) measures, over all 2^32 inputs, the
// smallest relative distance between tanh(x) and a rounding boundary (the midpoint between two
// floats): 2^-50.28 over the expm1 path (bound 2^-50.42) and 2^-49.60 over the exp path (bound
// 2^-50.23), so any such expm1 and exp — the host's or the device's — give the correctly rounded
// float.  test/unit/math_test.cpp re-checks every 97th bit pattern.
#include <math.h>
#include <stdint.h>

#ifndef TRL_HD
#if defined(__CUDACC__)
#define TRL_HD __host__ __device__
#else
#define TRL_HD
#endif
#endif

namespace trl {

/** tanh(x) for f32, correctly rounded on every input (see the file comment); odd, NaN kept. */
TRL_HD inline float tanh_f32(float x) {
    float a = fabsf(x);
    if (!(a >= 0x1p-12f)) return x;                 // |x| < 2^-12, ±0, subnormal, NaN
    if (a > 9.5f) return x > 0.0f ? 1.0f : -1.0f;  // also ±inf
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

}  // namespace trl
