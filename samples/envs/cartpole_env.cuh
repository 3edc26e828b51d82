#pragma once
// cartpole_env.cuh — CartPole-v1's step in CUDA C++, for samples/extern_cartpole.trl: the
// dynamics of gymnasium/envs/classic_control/cartpole.py in double precision (explicit Euler),
// written operation for operation as dsl/std/envs/cartpole.trl writes them, so that a program
// stepping through this function computes the bits of one stepping through cartpole.step.
//
// The trlc extern ABI (dsl/README.md, "extern functions"): inputs first (arrays as const T[N]),
// then one output per result, here (f64[4], f32, bool) -> double[4], float *, bool *.
// Its cos and sin are the runtime's correctly rounded trl::cos_f64 / sin_f64 (trl_math.h), the
// functions `cos` and `sin` of a .trl program compile to: the same bits on the host and the GPU
// (libm's and CUDA's cos differ in the last bit for some arguments).
#include <stdint.h>

#include "trl_math.h"  // trl::cos_f64, trl::sin_f64
#include "trl_rt.h"    // TRL_HOST_DEVICE: __host__ __device__ under nvcc, nothing on the host

namespace cartpole_env {
constexpr double gravity = 9.8;
constexpr double masscart = 1.0;
constexpr double masspole = 0.1;
constexpr double total_mass = masspole + masscart;
constexpr double length = 0.5;  // half the pole's length
constexpr double polemass_length = masspole * length;
constexpr double force_mag = 10.0;
constexpr double tau = 0.02;  // seconds between state updates
constexpr double pi = 3.141592653589793;
constexpr double theta_threshold_radians = 12 * 2 * pi / 360;
constexpr double x_threshold = 2.4;
}  // namespace cartpole_env

/** One step from state s = [x, x_dot, theta, theta_dot] under action a (1 = push right,
 *  0 = push left): the next state, the reward (1) and whether the episode terminated. */
TRL_HOST_DEVICE inline void cartpole_step(const double s[4], int32_t a, double next[4], float *reward,
                                          bool *terminated) {
    using namespace cartpole_env;
    const double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
    const double force = a == 1 ? force_mag : -force_mag;
    const double costheta = trl::cos_f64(theta);
    const double sintheta = trl::sin_f64(theta);
    const double temp = (force + polemass_length * (theta_dot * theta_dot) * sintheta) / total_mass;
    const double thetaacc =
        (gravity * sintheta - costheta * temp) / (length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass));
    const double xacc = temp - polemass_length * thetaacc * costheta / total_mass;
    next[0] = x + tau * x_dot;
    next[1] = x_dot + tau * xacc;
    next[2] = theta + tau * theta_dot;
    next[3] = theta_dot + tau * thetaacc;
    *reward = 1.0f;
    *terminated = next[0] < -x_threshold || next[0] > x_threshold || next[2] < -theta_threshold_radians ||
                  next[2] > theta_threshold_radians;
}
