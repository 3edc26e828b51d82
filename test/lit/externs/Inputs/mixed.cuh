// Extern fns of every dtype and a 2-d input, for mixed-dtypes.trl.
#pragma once
#include <stdint.h>

#include "trl_rt.h"

/** out0[i] = m's element i (row-major: m[i / 3, i % 3]) * k + i + flag; out1 = the sum of m;
 *  out2 = the sum is even. */
TRL_HOST_DEVICE inline void affine(const double m[6], bool flag, int32_t k, int32_t out0[6],
                                   float *out1, bool *out2) {
    double sum = 0;
    for (int i = 0; i < 6; ++i) {
        out0[i] = (int32_t)m[i] * k + i + (flag ? 1 : 0);
        sum += m[i];
    }
    *out1 = (float)sum;
    *out2 = ((int64_t)sum) % 2 == 0;
}

/** A non-tuple result is out0. */
TRL_HOST_DEVICE inline void half(float x, float *out0) { *out0 = x * 0.5f; }
