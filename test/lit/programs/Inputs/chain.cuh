// A 6-state chain MDP for the extern probe: action 1 moves right, 0 moves left (state 0 stays);
// reaching state 5 pays 1 and ends the episode; every other step costs 0.01.
#pragma once
#include "trl_rt.h"
#include <stdint.h>

TRL_HOST_DEVICE void chain_step(int32_t s, int32_t a, int32_t *s2, float *r, bool *done) {
    int32_t n = a == 1 ? s + 1 : (s > 0 ? s - 1 : 0);
    *s2 = n;
    *done = n == 5;
    *r = n == 5 ? 1.0f : -0.01f;
}

TRL_HOST_DEVICE void chain_features(int32_t s, const float scale[2], float out[6]) {
    for (int k = 0; k < 6; ++k) out[k] = k == s ? scale[0] : scale[1];
}
