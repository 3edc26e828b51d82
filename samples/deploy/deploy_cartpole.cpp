// deploy_cartpole — a CartPole-v1 control loop that calls the trained PPO policy compiled as a
// library (ppo_policy.trl, `trlc ppo_policy.trl --emit=library -o DIR/ppo_policy`) every step.
// The environment is gymnasium's CartPole-v1 (classic_control/cartpole.py: f64 state, explicit
// Euler, termination outside ±2.4 m or ±12°, truncation after 500 steps), written here in plain
// C++; a reset draws each state component uniformly from [-0.05, 0.05) (std::mt19937_64).
//
//   c++ -std=c++17 deploy_cartpole.cpp -IDIR DIR/libppo_policy.so -Wl,-rpath,DIR -o deploy_cartpole
//   ./deploy_cartpole PARAM_DIR [STEPS=1000] [SEED=0]
//
// PARAM_DIR holds ppo_cartpole_policy.npz.  One line per step on stdout: the step, the
// observation the policy saw (f32, printed with 9 significant digits: exact), the action, and
// whether the episode ended with it ("t o0 o1 o2 o3 action done"); the episode returns on stderr.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "ppo_policy.h"

namespace {

/** gymnasium's CartPole-v1 state and step. */
struct CartPole {
    double s[4] = {0, 0, 0, 0};
    int elapsed = 0;

    void reset(std::mt19937_64 &rng) {
        std::uniform_real_distribution<double> u(-0.05, 0.05);
        for (double &v : s) v = u(rng);
        elapsed = 0;
    }

    /** One step under action a (1: push right); true when the episode ended (terminated or
     *  truncated at 500 steps). */
    bool step(int a) {
        const double gravity = 9.8, masscart = 1.0, masspole = 0.1, total_mass = masspole + masscart;
        const double length = 0.5, polemass_length = masspole * length, force_mag = 10.0, tau = 0.02;
        const double theta_threshold = 12 * 2 * M_PI / 360, x_threshold = 2.4;
        const double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
        const double force = a == 1 ? force_mag : -force_mag;
        const double costheta = std::cos(theta), sintheta = std::sin(theta);
        const double temp = (force + polemass_length * theta_dot * theta_dot * sintheta) / total_mass;
        const double thetaacc = (gravity * sintheta - costheta * temp) /
                                (length * (4.0 / 3.0 - masspole * costheta * costheta / total_mass));
        const double xacc = temp - polemass_length * thetaacc * costheta / total_mass;
        s[0] = x + tau * x_dot;
        s[1] = x_dot + tau * xacc;
        s[2] = theta + tau * theta_dot;
        s[3] = theta_dot + tau * thetaacc;
        ++elapsed;
        bool terminated =
            s[0] < -x_threshold || s[0] > x_threshold || s[2] < -theta_threshold || s[2] > theta_threshold;
        return terminated || elapsed >= 500;
    }
};

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PARAM_DIR [STEPS] [SEED]\n", argv[0]);
        return 2;
    }
    const long steps = argc > 2 ? std::atol(argv[2]) : 1000;
    const unsigned long long seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 0;
    char err[512];
    ppo_policy_ctx *policy = nullptr;
    if (ppo_policy_create(&policy, argv[1], err, sizeof err) != PPO_POLICY_OK) {
        std::fprintf(stderr, "%s: cannot load the policy: %s\n", argv[0], err);
        return 1;
    }
    std::mt19937_64 rng(seed);
    CartPole env;
    env.reset(rng);
    float obs[PPO_POLICY_obs_SIZE], logits[PPO_POLICY_logits_SIZE];
    int32_t action = 0;
    for (long t = 0; t < steps; ++t) {
        for (int k = 0; k < 4; ++k) obs[k] = static_cast<float>(env.s[k]);  // CartPole's f32 observation
        if (ppo_policy_run(policy, obs, &action, logits) != PPO_POLICY_OK) {
            std::fprintf(stderr, "%s: the policy failed: %s\n", argv[0], ppo_policy_error(policy));
            ppo_policy_destroy(policy);
            return 1;
        }
        const int length = env.elapsed + 1;
        const bool done = env.step(action);
        std::printf("%ld %.9g %.9g %.9g %.9g %d %d\n", t, obs[0], obs[1], obs[2], obs[3], action, done ? 1 : 0);
        if (done) {
            std::fprintf(stderr, "episode return %d\n", length);
            env.reset(rng);
        }
    }
    ppo_policy_destroy(policy);
    return 0;
}
