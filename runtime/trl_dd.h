#pragma once
// trl_dd — double-double arithmetic for trlc's correctly rounded f64 functions (trl_math_f64.h,
// trl_math_trig.h): a value hi + lo with |lo| ≤ ulp(hi)/2, about 106 significant bits, built
// from error-free transformations in plain IEEE double arithmetic (+ - *, no fma() call), so
// that the reference interpreter, a host build and a CUDA build compute the same bits.
// Header-only, host and device (nvcc).  Source: T. J. Dekker, "A floating-point technique for
// extending the available precision", Numer. Math. 18 (1971); D. E. Knuth, TAOCP vol. 2,
// §4.2.2 (TwoSum); J.-M. Muller et al., Handbook of Floating-Point Arithmetic (2nd ed., 2018),
// §4.3 (Fast2Sum, 2Sum), §4.4 (Veltkamp splitting, Dekker's product), §14 (double-word
// arithmetic and its error bounds).
//
// Exactness needs every a * b + c to round twice: generated host code builds with
// -ffp-contract=off, nvcc with -fmad=false, and the x86-64 builds of the compiler and the unit
// tests have no FMA instruction to contract into (a build with -march=haswell or on aarch64 must
// add -ffp-contract=off).  two_prod's splitting overflows for |a| or |b| above 2^996: callers
// keep their operands below that (they scale first).
//
// Example: two_sum(1.0, 0x1p-60) == {1.0, 0x1p-60}; two_prod(1 + 2^-30, 1 + 2^-30) ==
// {1 + 2^-29, 2^-60}.

#include <stdint.h>
#include <string.h>

#ifndef TRL_HD
#if defined(__CUDACC__)
#define TRL_HD __host__ __device__
#else
#define TRL_HD
#endif
#endif

/** A constant table readable from TRL_HD code: TRL_MATH_TABLE(double, name, {…}) defines
 *  name_host (a C++17 inline variable: one copy in a program of several translation units) and,
 *  under nvcc, name_dev in device global memory, and an accessor name() that returns the one of
 *  the side compiling.  Use inside a namespace. */
#if defined(__CUDACC__)
#define TRL_MATH_TABLE(T, name, ...)                                                                                   \
    inline constexpr T name##_host[] = __VA_ARGS__;                                                                    \
    static __device__ const T name##_dev[] = __VA_ARGS__;                                                              \
    TRL_HD inline const T *name() { return TRL_MATH_TABLE_PICK(name##_host, name##_dev); }
#if defined(__CUDA_ARCH__)
#define TRL_MATH_TABLE_PICK(h, d) d
#else
#define TRL_MATH_TABLE_PICK(h, d) h
#endif
#else
#define TRL_MATH_TABLE(T, name, ...)                                                                                   \
    inline constexpr T name##_host[] = __VA_ARGS__;                                                                    \
    inline const T *name() { return name##_host; }
#endif

/** TRL_OUTLINED is 1 in a host program that the driver links with the runtime objects (it
 *  compiles the program with -DTRL_RT_OUTLINED; never under nvcc, in a --standalone source, in
 *  the compiler or in the runtime's own sources).  There the largest functions of these headers
 *  (orthogonal_f64, permutation_i32, sin_quadrant, pow_positive, exp_accurate, log_accurate: the ones a program
 *  calls out of line anyway) are only declared, and their one copy is rt/trl_outlined.cpp,
 *  which the build cache compiles once per toolchain and flags instead of once per program
 *  build (0.9 s of PPO CartPole's 4.0 s -O3 compile).  Same flags, same strict IEEE arithmetic:
 *  the same bits.  The declaring side's wrappers are static: an inline function of the same
 *  name as the full one would be one COMDAT symbol for the linker to pick, and at -O0 the
 *  wrapper picked inside rt/trl_outlined.cpp called itself (diff_fuzz seed 11, SIGSEGV). */
#if defined(TRL_RT_OUTLINED) && !defined(__CUDACC__)
#define TRL_OUTLINED 1
#else
#define TRL_OUTLINED 0
#endif

namespace trl {
namespace dd {

/** The bits of a double (IEEE binary64), and the double of 64 bits (bit casts, no conversion). */
TRL_HD inline uint64_t bits(double x) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint64_t>(__double_as_longlong(x));
#else
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
#endif
}
TRL_HD inline double from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(b));
#else
    double x;
    memcpy(&x, &b, 8);
    return x;
#endif
}

/** hi + lo, |lo| ≤ ulp(hi) / 2 (a normalized double-word). */
struct DD {
    double hi, lo;
};

/** s + e == a + b exactly, s = fl(a + b), when |a| ≥ |b| or a == 0 (Fast2Sum). */
TRL_HD inline DD fast_two_sum(double a, double b) {
    double s = a + b;
    double e = b - (s - a);
    return {s, e};
}

/** s + e == a + b exactly, s = fl(a + b), any order (2Sum, 6 operations). */
TRL_HD inline DD two_sum(double a, double b) {
    double s = a + b;
    double bb = s - a;
    double e = (a - (s - bb)) + (b - bb);
    return {s, e};
}

/** a == hi + lo with hi, lo of at most 26 significant bits (Veltkamp, C = 2^27 + 1); |a| ≤ 2^996. */
TRL_HD inline DD split(double a) {
    double c = 134217729.0 * a;
    double hi = c - (c - a);
    return {hi, a - hi};
}

/** p + e == a · b exactly, p = fl(a · b) (Dekker's product, 17 operations, no fma); exact when
 *  no underflow occurs (|a · b| ≥ 2^-969) and |a|, |b| ≤ 2^996. */
TRL_HD inline DD two_prod(double a, double b) {
    double p = a * b;
    DD x = split(a), y = split(b);
    double e = ((x.hi * y.hi - p) + x.hi * y.lo + x.lo * y.hi) + x.lo * y.lo;
    return {p, e};
}

/** The double-word sum x + y (Muller §14, "AccurateDWPlusDW"): relative error ≤ 3u² + 13u³. */
TRL_HD inline DD add(DD x, DD y) {
    DD s = two_sum(x.hi, y.hi);
    DD t = two_sum(x.lo, y.lo);
    double c = s.lo + t.hi;
    DD v = fast_two_sum(s.hi, c);
    double w = t.lo + v.lo;
    return fast_two_sum(v.hi, w);
}

/** The double-word sum x + b of a double-word and a double ("DWPlusFP"): relative error ≤ 2u². */
TRL_HD inline DD add(DD x, double b) {
    DD s = two_sum(x.hi, b);
    double v = x.lo + s.lo;
    return fast_two_sum(s.hi, v);
}

/** The double-word product x · b ("DWTimesFP1" without fma): relative error ≤ 1.5u² + 4u³. */
TRL_HD inline DD mul(DD x, double b) {
    DD c = two_prod(x.hi, b);
    double cl3 = c.lo + x.lo * b;
    return fast_two_sum(c.hi, cl3);
}

/** The double-word product x · y ("DWTimesDW1" without fma): relative error ≤ 7u². */
TRL_HD inline DD mul(DD x, DD y) {
    DD c = two_prod(x.hi, y.hi);
    double tl = x.hi * y.lo + x.lo * y.hi;
    double cl = c.lo + tl;
    return fast_two_sum(c.hi, cl);
}

/** A triple-double hi + mi + lo (Lauter's triple-double format, about 159 bits), the accurate
 *  phase of the correctly rounded functions: after renorm, hi = RN(hi + mi), mi = RN(mi + lo). */
struct TD {
    double hi, mi, lo;
};

/** a + b + c as a renormalized TD, exactly (three 2Sums, any order of magnitudes). */
TRL_HD inline TD renorm(double a, double b, double c) {
    DD s = two_sum(a, b);
    DD t = two_sum(s.lo, c);
    DD u = two_sum(s.hi, t.hi);
    DD v = two_sum(u.lo, t.lo);
    DD w = two_sum(u.hi, v.hi);
    DD m = two_sum(w.lo, v.lo);
    return {w.hi, m.hi, m.lo};
}

/** The TD sum x + b: relative error ≤ 2^-150 of the larger operand (more after cancellation, in
 *  relative terms, never in absolute terms). */
TRL_HD inline TD add(TD x, double b) {
    DD s = two_sum(x.hi, b);
    DD t = two_sum(x.mi, s.lo);
    return renorm(s.hi, t.hi, t.lo + x.lo);
}

/** The TD sum x + y: absolute error ≤ 2^-150·(|x| + |y|). */
TRL_HD inline TD add(TD x, TD y) {
    DD s = two_sum(x.hi, y.hi);
    DD t = two_sum(x.mi, y.mi);
    DD u = two_sum(s.lo, t.hi);
    return renorm(s.hi, u.hi, (u.lo + t.lo) + (x.lo + y.lo));
}

/** The TD product x · y: relative error ≤ 2^-149 (the terms below 2^-156·|x·y| are dropped). */
TRL_HD inline TD mul(TD x, TD y) {
    DD p = two_prod(x.hi, y.hi);
    DD q = two_prod(x.hi, y.mi);
    DD r = two_prod(x.mi, y.hi);
    DD s = two_sum(q.hi, r.hi);
    DD t = two_sum(p.lo, s.hi);
    double low = ((x.mi * y.mi + x.hi * y.lo) + (x.lo * y.hi + q.lo + r.lo)) + (s.lo + t.lo);
    return renorm(p.hi, t.hi, low);
}

/** The TD product x · b: relative error ≤ 2^-150. */
TRL_HD inline TD mul(TD x, double b) {
    DD p = two_prod(x.hi, b);
    DD q = two_prod(x.mi, b);
    DD t = two_sum(p.lo, q.hi);
    return renorm(p.hi, t.hi, (x.lo * b + q.lo) + t.lo);
}

}  // namespace dd
}  // namespace trl
