// The extern function declared by sema/outputs.trl (the ABI of dsl/README.md §7.6).
#pragma once
#include <stdint.h>
#include "trl_rt.h"

TRL_HOST_DEVICE inline void step(const float s[4], int32_t a, float out0[4], float *out1,
                                 bool *out2) {
    for (int k = 0; k < 4; ++k) out0[k] = s[k] + (a ? 1.0f : -1.0f);
    *out1 = 1.0f;
    *out2 = false;
}
