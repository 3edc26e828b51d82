// Philox4x32-10 known-answer vectors (Random123 kat_vectors) and the trl_random mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "trl_philox.h"
#include "trl_random.h"

namespace {

trl::Philox4x32 run(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    return trl::philox4x32_10({{c0, c1, c2, c3}}, {{k0, k1}});
}

void expect_block(trl::Philox4x32 r, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    EXPECT_EQ(r.v[0], a);
    EXPECT_EQ(r.v[1], b);
    EXPECT_EQ(r.v[2], c);
    EXPECT_EQ(r.v[3], d);
}

TEST(Philox, KnownAnswerZero) { expect_block(run(0, 0, 0, 0, 0, 0), 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8); }

TEST(Philox, KnownAnswerOnes) {
    expect_block(run(~0u, ~0u, ~0u, ~0u, ~0u, ~0u), 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd);
}

TEST(Philox, KnownAnswerPi) {
    expect_block(run(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0), 0xd16cfe09, 0x94fdcceb,
                 0x5001e420, 0x24126ea1);
}

TEST(Random, Fnv1a32KnownValues) {
    // FNV-1a 32 test vectors (Fowler/Noll/Vo reference): "" and "a" and "foobar".
    EXPECT_EQ(trl::fnv1a32("", 0), 0x811c9dc5u);
    EXPECT_EQ(trl::fnv1a32("a", 1), 0xe40c292cu);
    EXPECT_EQ(trl::fnv1a32("foobar", 6), 0xbf9cf968u);
}

TEST(Random, KeyDerivationFollowsTheSpec) {
    // Recompute every step by hand from the specification in dsl/README.md §8.
    uint64_t seed = 0x0000000500000007ull;
    uint32_t nh = trl::fnv1a32("ret", 3);
    trl::Philox4x32 d = run(7, 5, nh, 0, 0, 0);
    trl::Philox2x32Key sk = trl::stream_key(seed, nh);
    EXPECT_EQ(sk.k[0], d.v[0]);
    EXPECT_EQ(sk.k[1], d.v[1]);
    trl::RngKey k = trl::fold_in(trl::fold_in(trl::rng_root(sk), 3), -1);
    uint64_t h = 0xcbf29ce484222325ull;
    const uint8_t bytes[8] = {3, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    for (uint8_t b : bytes) {
        h ^= b;
        h *= 0x100000001b3ull;
    }
    EXPECT_EQ(k.h, h);
    trl::Philox4x32 b1 = run(1, 0, static_cast<uint32_t>(h), static_cast<uint32_t>(h >> 32), sk.k[0], sk.k[1]);
    // f32 element 5 = block 1, word 1.
    EXPECT_EQ(trl::uniform_f32(k, 5), static_cast<float>(b1.v[1] >> 8) / 16777216.0f);
    // f64 element 3 = block 1, words 2 and 3.
    double u = (static_cast<double>(b1.v[2] >> 5) * 67108864.0 + (b1.v[3] >> 6)) / 9007199254740992.0;
    EXPECT_EQ(trl::uniform_f64(k, 3), u);
    // normal f64 element 1 = Box-Muller on block 1.
    double u1 = (static_cast<double>(b1.v[0] >> 5) * 67108864.0 + (b1.v[1] >> 6) + 1.0) / 9007199254740992.0;
    double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u);
    EXPECT_EQ(trl::normal_f64(k, 1), z);
}

TEST(Random, UniformMomentsAndRange) {
    trl::RngKey k = trl::fold_in(trl::rng_root(trl::stream_key(0, 1)), 0);
    double s = 0, s2 = 0;
    const int n = 100000;
    for (int j = 0; j < n; ++j) {
        float u = trl::uniform_f32(k, j);
        ASSERT_GE(u, 0.0f);
        ASSERT_LT(u, 1.0f);
        s += u;
        s2 += static_cast<double>(u) * u;
    }
    EXPECT_NEAR(s / n, 0.5, 0.005);
    EXPECT_NEAR(s2 / n - (s / n) * (s / n), 1.0 / 12, 0.002);
}

TEST(Random, NormalMoments) {
    trl::RngKey k = trl::rng_root(trl::stream_key(42, 9));
    double s = 0, s2 = 0;
    const int n = 100000;
    for (int j = 0; j < n; ++j) {
        double z = trl::normal_f64(k, j);
        ASSERT_TRUE(std::isfinite(z));
        s += z;
        s2 += z * z;
    }
    EXPECT_NEAR(s / n, 0.0, 0.02);
    EXPECT_NEAR(s2 / n, 1.0, 0.02);
}

TEST(Random, CategoricalFrequencies) {
    trl::RngKey k = trl::rng_root(trl::stream_key(1, 2));
    const float logits[3] = {std::log(0.2f), std::log(0.3f), std::log(0.5f)};
    int counts[3] = {0, 0, 0};
    const int n = 60000;
    for (int r = 0; r < n; ++r) counts[trl::categorical(k, r, logits, 3)]++;
    EXPECT_NEAR(counts[0] / double(n), 0.2, 0.01);
    EXPECT_NEAR(counts[1] / double(n), 0.3, 0.01);
    EXPECT_NEAR(counts[2] / double(n), 0.5, 0.01);
    const float masked[3] = {-INFINITY, 0.0f, -INFINITY};
    for (int r = 0; r < 100; ++r) EXPECT_EQ(trl::categorical(k, r, masked, 3), 1);
}

}  // namespace
