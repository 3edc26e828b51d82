// runtime/trl_math.h: trl::tanh_f32 is correctly rounded.  Every 97th of the 2^32 float bit
// patterns (both signs, NaNs, infinities, zeros, subnormals among them) is compared with tanhl
// (64-bit significand) rounded to float; the exhaustive check over all 2^32 patterns, with
// libquadmath for the inputs near a rounding midpoint, is tools/bench/tanhf_exhaustive.cpp
// (it found no input whose tanhl value is near enough to a midpoint for tanhl's own error to
// matter, so tanhl rounded to float is a correct reference on every input sampled here).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

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

/** tanh(x) correctly rounded to float, NaN for NaN. */
float reference(float x) { return static_cast<float>(tanhl(static_cast<long double>(x))); }

TEST(TanhF32, SpecialValues) {
    EXPECT_EQ(to_bits(trl::tanh_f32(0.0f)), to_bits(0.0f));
    EXPECT_EQ(to_bits(trl::tanh_f32(-0.0f)), to_bits(-0.0f));  // sign of zero kept
    EXPECT_EQ(trl::tanh_f32(INFINITY), 1.0f);
    EXPECT_EQ(trl::tanh_f32(-INFINITY), -1.0f);
    EXPECT_TRUE(std::isnan(trl::tanh_f32(NAN)));
    EXPECT_TRUE(std::isnan(trl::tanh_f32(-NAN)));
    float sub = from_bits(0x00000001u);  // smallest subnormal: tanh(x) rounds to x
    EXPECT_EQ(trl::tanh_f32(sub), sub);
    EXPECT_EQ(trl::tanh_f32(-sub), -sub);
    EXPECT_EQ(trl::tanh_f32(20.0f), 1.0f);
    EXPECT_EQ(trl::tanh_f32(-20.0f), -1.0f);
}

// Around the cut-offs of trl_math.h (2^-12, 1/4 between expm1 and exp, 9.5): 4096 patterns on
// either side of each.
TEST(TanhF32, CutOffs) {
    for (float c : {0x1p-12f, 0.25f, 9.5f, 9.0f}) {
        uint32_t b = to_bits(c);
        for (uint32_t i = b - 4096; i <= b + 4096; ++i) {
            float x = from_bits(i);
            ASSERT_EQ(to_bits(trl::tanh_f32(x)), to_bits(reference(x))) << "x = " << x;
            ASSERT_EQ(to_bits(trl::tanh_f32(-x)), to_bits(-reference(x))) << "x = " << -x;
        }
    }
}

// Inputs on which glibc 2.36's tanhf is one ulp off; the expected floats are mpmath's tanh at 200
// bits rounded to 24 (independent of tanhl and of this machine's libm).
TEST(TanhF32, KnownValuesFromMpmath) {
    const float cases[][2] = {{0x1.000002p-1f, 0x1.d9354p-2f},   {0x1.000012p+0f, 0x1.85efbap-1f},
                              {0x1.80003cp+0f, 0x1.cf6faep-1f}, {0x1.000012p+1f, 0x1.ed950ap-1f},
                              {0x1.400298p+1f, 0x1.f925cap-1f}, {0x1.800096p+1f, 0x1.fd77d6p-1f}};
    for (const auto &c : cases) {
        EXPECT_EQ(to_bits(trl::tanh_f32(c[0])), to_bits(c[1])) << "x = " << c[0];
        EXPECT_EQ(to_bits(trl::tanh_f32(-c[0])), to_bits(-c[1])) << "x = " << -c[0];
    }
}

TEST(TanhF32, EveryNinetySeventhBitPattern) {
    uint64_t bad = 0, checked = 0;
    for (uint64_t u = 0; u <= 0xffffffffu; u += 97) {
        float x = from_bits(static_cast<uint32_t>(u));
        float y = trl::tanh_f32(x);
        ++checked;
        if (std::isnan(x)) {
            if (!std::isnan(y)) ++bad;
            continue;
        }
        if (to_bits(y) != to_bits(reference(x))) {
            if (bad < 10) ADD_FAILURE() << "x = " << x << " (0x" << std::hex << u << ")";
            ++bad;
        }
    }
    EXPECT_EQ(bad, 0u) << "of " << checked;
    EXPECT_GT(checked, 44000000u);
}

}  // namespace
