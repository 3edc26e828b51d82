#pragma once
// trl_random — the random streams of a .trl program: the exact mapping from (seed, tensor name,
// rng coordinates, element index) to numbers.  Header-only, host and device (nvcc), shared by
// the reference interpreter and generated programs so that both produce the same bits.
// The specification (reimplementable from the text) is dsl/README.md §8; summary:
//
//   stream key   (k0, k1)  = words 0, 1 of philox4x32_10({seed_lo, seed_hi, fnv1a32(name), rank},
//                                                        {0, 0}); rank 0 unless --distributed
//                            keys the tensor by its rank
//   rng(c1..cn)  key       = (k0, k1, h) with h = FNV-1a-64 over the 4 little-endian bytes of
//                            each i32 coordinate; fold_in(key, v) continues the same hash with v
//   block j                = philox4x32_10({j_lo, j_hi, h_lo, h_hi}, {k0, k1})
//   uniform f32 element j  = (block(j/4).v[j%4] >> 8) * 2^-24
//   uniform f64 element j  = ((w[2m] >> 5) * 2^26 + (w[2m+1] >> 6)) * 2^-53, w = block(j/2), m=j%2
//   normal element j       = Box–Muller on block(j): sqrt(-2 log u1) * cos(2π u2), u1 ∈ (0, 1]
//   categorical row r      = inverse CDF of softmax(logits) with the f64 uniform of block(r)
#include "trl_libm.h"
#include <stddef.h>
#include <stdint.h>

#include "trl_math.h"
#include "trl_philox.h"

namespace trl {

/** The value of an `rng(...)` key: the stream's Philox key and the coordinate hash. */
struct RngKey {
    uint32_t k0, k1;  // Philox key of the stream (seed, tensor name)
    uint64_t h;       // FNV-1a-64 of the rng coordinates (and fold_in values)
};

constexpr uint64_t kFnv64Offset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnv64Prime = 0x100000001b3ull;

/** 32-bit FNV-1a of n bytes (offset 0x811C9DC5, prime 0x01000193). */
TRL_HD inline uint32_t fnv1a32(const char *s, size_t n) {
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < n; ++i) {
        h ^= static_cast<uint8_t>(s[i]);
        h *= 0x01000193u;
    }
    return h;
}

/** FNV-1a 64 of n bytes continuing "h" (start kFnv64Offset): the parameter digest that the
 *  ranks of a data-parallel run compare (trl_digest; trlc --interpret --ranks N). */
TRL_HD inline uint64_t fnv1a64(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnv64Prime;
    return h;
}

/** The Philox key of the streams of one tensor: derived from the 64-bit seed and the FNV-1a
 *  hash of the tensor's name by one Philox call (key {0, 0}).  "rank": the data-parallel rank
 *  of a tensor whose draws differ between ranks (trlc --distributed, passes/distribute.h), 0
 *  otherwise (so rank 0 draws what a one-process run draws). */
TRL_HD inline Philox2x32Key stream_key(uint64_t seed, uint32_t name_hash, uint32_t rank = 0) {
    Philox4x32 c = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), name_hash, rank}};
    Philox2x32Key zero = {{0u, 0u}};
    Philox4x32 r = philox4x32_10(c, zero);
    Philox2x32Key k = {{r.v[0], r.v[1]}};
    return k;
}

/** Continue a key's coordinate hash with one i32 value (its 4 little-endian bytes). */
TRL_HD inline RngKey fold_in(RngKey key, int32_t v) {
    uint32_t u = static_cast<uint32_t>(v);
    for (int b = 0; b < 4; ++b) {
        key.h ^= (u >> (8 * b)) & 0xFFu;
        key.h *= kFnv64Prime;
    }
    return key;
}

/** `rng()` with no coordinates yet: the stream key and the FNV-64 offset basis.  rng(c1..cn)
 *  = fold_in(...fold_in(rng_root(sk), c1)..., cn). */
TRL_HD inline RngKey rng_root(Philox2x32Key sk) {
    RngKey k;
    k.k0 = sk.k[0];
    k.k1 = sk.k[1];
    k.h = kFnv64Offset;
    return k;
}

/** Block j of a key's stream: four random words. */
TRL_HD inline Philox4x32 rng_block(RngKey key, uint64_t j) {
    Philox4x32 c = {{static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32), static_cast<uint32_t>(key.h),
                     static_cast<uint32_t>(key.h >> 32)}};
    Philox2x32Key k = {{key.k0, key.k1}};
    return philox4x32_10(c, k);
}

/** Top 24 bits of a word as a float in [0, 1). */
TRL_HD inline float u24(uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }

/** 53 bits (27 of a, 26 of b) as a double in [0, 1). */
TRL_HD inline double u53(uint32_t a, uint32_t b) {
    return (static_cast<double>(a >> 5) * 67108864.0 + static_cast<double>(b >> 6)) * (1.0 / 9007199254740992.0);
}

/** Element j of uniform(key, shape) as f32: [0, 1). */
TRL_HD inline float uniform_f32(RngKey key, uint64_t j) { return u24(rng_block(key, j / 4).v[j % 4]); }

/** Element j of uniform(key, shape) as f64: [0, 1). */
TRL_HD inline double uniform_f64(RngKey key, uint64_t j) {
    Philox4x32 b = rng_block(key, j / 2);
    int m = static_cast<int>(j % 2);
    return u53(b.v[2 * m], b.v[2 * m + 1]);
}

/** Element j of normal(key, shape) as f32: Box–Muller on block j, computed in float:
 *  u1 = ((w0 >> 8) + 1) * 2^-24 in (0, 1], u2 = (w1 >> 8) * 2^-24,
 *  z = sqrtf(-2.0f * log_f32(u1)) * cos_f32(6.28318548f * u2) (trl_math.h). */
TRL_HD inline float normal_f32(RngKey key, uint64_t j) {
    Philox4x32 b = rng_block(key, j);
    float u1 = static_cast<float>((b.v[0] >> 8) + 1u) * (1.0f / 16777216.0f);
    float u2 = u24(b.v[1]);
    return sqrtf(-2.0f * log_f32(u1)) * cos_f32(6.28318548f * u2);
}

/** Element j of normal(key, shape) as f64: Box–Muller on block j, computed in double:
 *  u1 = u53(w0, w1) + 2^-53 in (0, 1], u2 = u53(w2, w3),
 *  z = sqrt(-2.0 * log_f64(u1)) * cos_f64(6.283185307179586 * u2) (correctly rounded: trl_math_f64.h,
 *  trl_math_trig.h). */
TRL_HD inline double normal_f64(RngKey key, uint64_t j) {
    Philox4x32 b = rng_block(key, j);
    double u1 = u53(b.v[0], b.v[1]) + (1.0 / 9007199254740992.0);
    double u2 = u53(b.v[2], b.v[3]);
    return sqrt(-2.0 * log_f64(u1)) * cos_f64(6.283185307179586 * u2);
}

/** Sample r of categorical(key, logits) where logits[0..n) is row r (the last axis): inverse
 *  CDF over softmax(logits) in double with one uniform u = u53(w0, w1) of block r.
 *  m = max logit; e_i = exp(l_i - m); S = Σ e_i (i ascending); the result is the first i with
 *  u * S < e_0 + … + e_i, or, if rounding leaves none, the last i with e_i > 0.  Special
 *  cases: any NaN logit → 0; m = +inf → the first i with l_i = +inf; all -inf → 0. */
template <class T>
TRL_HD inline int32_t categorical(RngKey key, uint64_t r, const T *logits, int64_t n) {
    if (n <= 0) return 0;
    double m = static_cast<double>(logits[0]);
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
        double l = static_cast<double>(logits[i]);
        if (l != l) nan = true;
        if (l > m) m = l;
    }
    if (nan || m != m) return 0;
    if (isinf(m)) {
        if (m > 0) {
            for (int64_t i = 0; i < n; ++i)
                if (static_cast<double>(logits[i]) == m) return static_cast<int32_t>(i);
        }
        return 0;
    }
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += exp_f64(static_cast<double>(logits[i]) - m);
    Philox4x32 b = rng_block(key, r);
    double t = u53(b.v[0], b.v[1]) * s;
    double c = 0.0;
    int64_t last = 0;
    for (int64_t i = 0; i < n; ++i) {
        double e = exp_f64(static_cast<double>(logits[i]) - m);
        c += e;
        if (e > 0.0) last = i;
        if (t < c) return static_cast<int32_t>(i);
    }
    return static_cast<int32_t>(last);
}

}  // namespace trl
