// runtime/trl_math.h: trl::exp_f32, log_f32, tanh_f32 and sigmoid_f32 stay within their
// documented error bounds and give libm's special values.  Reference: the long double (x87,
// 64-bit significand) expl / logl / tanhl of glibc, independent of trl_math.h's float
// arithmetic.  Sampled: every 2999th of the 2^32 float bit patterns (both signs, NaNs,
// infinities, zeros, subnormals among them) plus 4096 patterns on either side of each cut-off;
// the measurement over all 2^32 patterns is tools/bench/math_exhaustive.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "trl_math.h"

namespace {

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}
uint32_t to_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

long double ref_exp(long double x) { return expl(x); }
long double ref_log(long double x) { return logl(x); }
long double ref_tanh(long double x) { return tanhl(x); }
long double ref_sigmoid(long double x) {
    long double e = expl(-fabsl(x));
    return (x < 0 ? e : 1.0L) / (1.0L + e);
}

/** One ulp of the float binade of v (2^-149 below 2^-126). */
long double ulp_of(long double v) {
    long double a = fabsl(v);
    if (a < 0x1p-126L) return 0x1p-149L;
    int e;
    frexpl(a, &e);
    return ldexpl(1.0L, e - 24);
}

/** The documented max errors (trl_math.h's comment, dsl/README.md §5.x), in ulps. */
struct Fn {
    const char *name;
    float (*f)(float);
    long double (*ref)(long double);
    double bound;
};
const Fn kFns[] = {{"exp", trl::exp_f32, ref_exp, 1.0},
                   {"log", trl::log_f32, ref_log, 1.0},
                   {"tanh", trl::tanh_f32, ref_tanh, 2.0},
                   {"sigmoid", trl::sigmoid_f32, ref_sigmoid, 2.5}};

/** "" if f(x) is within the bound of the reference (or the same inf / NaN), else a message. */
std::string check(const Fn &fn, float x) {
    float y = fn.f(x);
    long double r = fn.ref(static_cast<long double>(x));
    float rf = static_cast<float>(r);
    std::ostringstream msg;
    msg << fn.name << "(" << std::hexfloat << x << ") = " << y << ", reference " << static_cast<double>(r);
    if (std::isnan(r)) return std::isnan(y) ? "" : msg.str();
    if (std::isinf(rf) || std::isinf(y) || std::isnan(y)) return to_bits(y) == to_bits(rf) ? "" : msg.str();
    long double err = fabsl(static_cast<long double>(y) - r) / ulp_of(r);
    if (err <= fn.bound) return "";
    msg << std::defaultfloat << ": " << static_cast<double>(err) << " ulp";
    return msg.str();
}

TEST(MathF32, EveryTwoThousandNineHundredNinetyNinthBitPattern) {
    for (const Fn &fn : kFns) {
        uint64_t bad = 0, checked = 0;
        for (uint64_t u = 0; u <= 0xffffffffu; u += 2999) {
            std::string m = check(fn, from_bits(static_cast<uint32_t>(u)));
            ++checked;
            if (!m.empty() && bad++ < 10) ADD_FAILURE() << m;
        }
        EXPECT_EQ(bad, 0u) << fn.name << ": of " << checked;
        EXPECT_GT(checked, 1430000u);
    }
}

// The cut-offs of trl_math.h: tanh's 0.625 between polynomial and exp; exp's overflow
// (88.72), start of subnormal results (-87.34), underflow to 0 (-103.97) and clamps (89,
// -105); log's subnormal scaling (2^-126), √2 (where k steps) and 1; 4096 patterns either side.
TEST(MathF32, CutOffs) {
    const float cuts[] = {0.625f,    88.7228394f, -87.3365479f, -103.972076f, 89.0f, -105.0f,
                          0x1p-126f, 1.41421354f, 0.707106769f, 1.0f,         0.0f};
    for (const Fn &fn : kFns)
        for (float c : cuts)
            for (int sign = 0; sign < 2; ++sign) {
                uint32_t b = to_bits(sign ? -c : c);
                for (uint32_t i = b < 4096 ? 0 : b - 4096; i <= b + 4096; ++i) {
                    std::string m = check(fn, from_bits(i));
                    ASSERT_TRUE(m.empty()) << m;
                }
            }
}

TEST(MathF32, SpecialValues) {
    const float inf = INFINITY, sub = from_bits(1u);  // smallest subnormal
    // exp
    EXPECT_EQ(trl::exp_f32(0.0f), 1.0f);
    EXPECT_EQ(trl::exp_f32(-0.0f), 1.0f);
    EXPECT_EQ(trl::exp_f32(inf), inf);
    EXPECT_EQ(to_bits(trl::exp_f32(-inf)), to_bits(0.0f));
    EXPECT_TRUE(std::isnan(trl::exp_f32(NAN)));
    EXPECT_EQ(trl::exp_f32(88.8f), inf);  // overflow
    EXPECT_EQ(trl::exp_f32(1e30f), inf);
    EXPECT_EQ(trl::exp_f32(-104.0f), 0.0f);  // below half the smallest subnormal
    EXPECT_EQ(trl::exp_f32(-1e30f), 0.0f);
    EXPECT_EQ(trl::exp_f32(-103.27893f), sub);  // e^-103.28 = 1.0 · 2^-149
    EXPECT_EQ(trl::exp_f32(sub), 1.0f);
    // log
    EXPECT_EQ(to_bits(trl::log_f32(1.0f)), to_bits(0.0f));  // +0, as libm
    EXPECT_EQ(trl::log_f32(0.0f), -inf);
    EXPECT_EQ(trl::log_f32(-0.0f), -inf);
    EXPECT_EQ(trl::log_f32(inf), inf);
    EXPECT_TRUE(std::isnan(trl::log_f32(-1.0f)));
    EXPECT_TRUE(std::isnan(trl::log_f32(-inf)));
    EXPECT_TRUE(std::isnan(trl::log_f32(-sub)));
    EXPECT_TRUE(std::isnan(trl::log_f32(NAN)));
    EXPECT_EQ(trl::log_f32(2.0f), 0x1.62e43p-1f);   // ln 2 rounded to nearest (mpmath)
    EXPECT_EQ(trl::log_f32(sub), -0x1.9d1da0p+6f);  // -149 ln 2 = -103.2789, rounded (mpmath)
    // tanh: odd, sign of zero kept
    EXPECT_EQ(to_bits(trl::tanh_f32(0.0f)), to_bits(0.0f));
    EXPECT_EQ(to_bits(trl::tanh_f32(-0.0f)), to_bits(-0.0f));
    EXPECT_EQ(trl::tanh_f32(inf), 1.0f);
    EXPECT_EQ(trl::tanh_f32(-inf), -1.0f);
    EXPECT_EQ(trl::tanh_f32(20.0f), 1.0f);
    EXPECT_EQ(trl::tanh_f32(-20.0f), -1.0f);
    EXPECT_EQ(trl::tanh_f32(sub), sub);
    EXPECT_EQ(trl::tanh_f32(-sub), -sub);
    EXPECT_TRUE(std::isnan(trl::tanh_f32(NAN)));
    EXPECT_TRUE(std::isnan(trl::tanh_f32(-NAN)));
    // sigmoid
    EXPECT_EQ(trl::sigmoid_f32(0.0f), 0.5f);
    EXPECT_EQ(trl::sigmoid_f32(-0.0f), 0.5f);
    EXPECT_EQ(trl::sigmoid_f32(inf), 1.0f);
    EXPECT_EQ(to_bits(trl::sigmoid_f32(-inf)), to_bits(0.0f));
    EXPECT_EQ(trl::sigmoid_f32(-100.0f), trl::exp_f32(-100.0f));  // e^-100 / (1 + e^-100)
    EXPECT_TRUE(std::isnan(trl::sigmoid_f32(NAN)));
}

// A few values against mpmath at 200 bits rounded to 24 (independent of this machine's libm):
// the result must be that float or its neighbour within the bound (1 ulp here: exp and log
// are measured below 1 ulp, tanh and sigmoid below 2).
TEST(MathF32, KnownValuesFromMpmath) {
    struct Case {
        float (*f)(float);
        float x, y;
        uint32_t max_ulps;
    };
    const Case cases[] = {{trl::exp_f32, 1.0f, 0x1.5bf0a8p+1f, 1},     {trl::exp_f32, -1.0f, 0x1.78b564p-2f, 1},
                          {trl::exp_f32, 10.0f, 0x1.5829dcp+14f, 1},   {trl::log_f32, 10.0f, 0x1.26bb1cp+1f, 1},
                          {trl::log_f32, 0.5f, -0x1.62e43p-1f, 1},     {trl::tanh_f32, 0.5f, 0x1.d9353ep-2f, 2},
                          {trl::tanh_f32, 1.0f, 0x1.85efacp-1f, 2},    {trl::sigmoid_f32, 1.0f, 0x1.764d5p-1f, 2},
                          {trl::sigmoid_f32, -3.0f, 0x1.848344p-5f, 2}};
    for (const Case &c : cases) {
        int64_t d = static_cast<int64_t>(to_bits(c.f(c.x))) - static_cast<int64_t>(to_bits(c.y));
        EXPECT_LE(d < 0 ? -d : d, c.max_ulps) << "x = " << c.x << " gives " << c.f(c.x) << ", want " << c.y;
    }
}

}  // namespace
