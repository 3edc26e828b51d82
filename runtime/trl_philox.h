#pragma once
// trl_philox — the Philox4x32-10 counter-based generator (Salmon, Moraes, Dror, Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11), header-only.
//
// philox4x32_10(counter, key) is a pure function of a 128-bit counter and a 64-bit key, so a
// random number depends only on its coordinates, never on a schedule or a thread count.  The
// same code compiles for the host and, under nvcc, for the device.  Checked against the
// Random123 known-answer vectors in test/unit/philox_test.cpp.
#include <stdint.h>

#if defined(__CUDACC__)
#define TRL_HD __host__ __device__
#else
#define TRL_HD
#endif

namespace trl {

/** Four 32-bit words: a Philox counter or one block of output. */
struct Philox4x32 {
    uint32_t v[4];
};

/** A Philox4x32 key: two 32-bit words. */
struct Philox2x32Key {
    uint32_t k[2];
};

namespace philox_detail {
constexpr uint32_t kM0 = 0xD2511F53u;  // round multipliers
constexpr uint32_t kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u;  // Weyl key increments (golden ratio, sqrt(3)-1)
constexpr uint32_t kW1 = 0xBB67AE85u;

TRL_HD inline void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
    uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
    *hi = static_cast<uint32_t>(p >> 32);
    *lo = static_cast<uint32_t>(p);
}

TRL_HD inline Philox4x32 round(Philox4x32 c, Philox2x32Key k) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kM0, c.v[0], &hi0, &lo0);
    mulhilo(kM1, c.v[2], &hi1, &lo1);
    Philox4x32 r;
    r.v[0] = hi1 ^ c.v[1] ^ k.k[0];
    r.v[1] = lo1;
    r.v[2] = hi0 ^ c.v[3] ^ k.k[1];
    r.v[3] = lo0;
    return r;
}
}  // namespace philox_detail

/** Philox4x32 with 10 rounds: the key is bumped by (W0, W1) between rounds. */
TRL_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, Philox2x32Key key) {
    for (int i = 0; i < 10; ++i) {
        if (i > 0) {
            key.k[0] += philox_detail::kW0;
            key.k[1] += philox_detail::kW1;
        }
        counter = philox_detail::round(counter, key);
    }
    return counter;
}

}  // namespace trl
