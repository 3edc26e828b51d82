// Functions for check-errors.trl: one correct, the others each break one rule of the ABI.
#pragma once
#include "trl_rt.h"

TRL_HOST_DEVICE inline void good(const float s[4], int32_t a, float next[4], float *r) {}
TRL_HOST_DEVICE inline void good_2d(const double m[6], bool flag, int32_t out[6]) {}
TRL_HOST_DEVICE inline void nested(const double m[2][3], bool flag, int32_t out[6]) {}
inline void host_only(const float s[4], int32_t a, float next[4], float *r) {}
__device__ inline void device_only(const float s[4], int32_t a, float next[4], float *r) {}
TRL_HOST_DEVICE inline void no_extent(const float *s, int32_t a, float next[4], float *r) {}
TRL_HOST_DEVICE inline void bad_extent(const float s[5], int32_t a, float next[4], float *r) {}
TRL_HOST_DEVICE inline void bad_dtype(const double s[4], int32_t a, float next[4], float *r) {}
TRL_HOST_DEVICE inline void not_const(float s[4], int32_t a, float next[4], float *r) {}
TRL_HOST_DEVICE inline void out_by_value(const float s[4], int32_t a, float next[4], float r) {}
TRL_HOST_DEVICE inline void too_few(const float s[4], int32_t a) {}
TRL_HOST_DEVICE inline float returns(const float s[4], int32_t a, float next[4], float *r) {
    return 0;
}
TRL_HOST_DEVICE void declared_only(const float s[4], int32_t a, float next[4], float *r);
TRL_HOST_DEVICE inline void env_step_v2(const float s[4], int32_t a, float next[4], float *r) {}
