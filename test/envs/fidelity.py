"""Step-by-step fidelity of dsl/std/envs against gymnasium on random (state, action) pairs.

    fidelity.py gen ENV DIR N     write DIR/states.npy and DIR/actions.npy: N random pairs drawn
                                  by numpy (fixed seed) from a box wider than the states an
                                  episode visits, so that every branch (termination, clipping,
                                  angle wrapping) is taken
    fidelity.py check ENV DIR     read DIR/out.npz, written by the .trl program of the lit test
                                  (test/lit/envs/ENV-pairs.trl) as (next_state, reward,
                                  terminated, obs(next_state), reset states[, cost]), and compare
                                  every pair with gymnasium's env.step from the same state; and
                                  DIR/auto.npz, step_auto on the first pairs with the elapsed
                                  counts of DIR/elapsed.npy, against gym.make's TimeLimit

Acceptance (issue 5): next states within 1e-12 in float64, rewards and termination flags exact,
observations equal as float32.  Reset states must lie in gymnasium's ranges and equal the
Philox draws of dsl/README.md §8 (recomputed here by test/lit/interp/Inputs/trl_random.py from
the text of the spec) mapped through gymnasium's formula low + (high - low) * u.  step_auto must
give gymnasium's truncated flag (TimeLimit with its elapsed-step counter set; half of the counts
are max_episode_steps - 1, so steps that both terminate and truncate occur) and, when the
episode ended, the reset draw of its key as the next state and 0 as the next count.

gymnasium runs with correctly rounded sin and cos (cr_math.patch: trlc's are correctly rounded,
glibc's not everywhere), and Pendulum's float32 u ** 2, where glibc's powf does not give the
correctly rounded square (or glibc's pow a float64 square), is checked against the cost with
correctly rounded squares (cr_math.pendulum_cost_cr) instead of gymnasium's reward; the number
of such pairs is printed.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lit", "interp", "Inputs"))
import trl_random  # noqa: E402
import cr_math  # noqa: E402

PI = np.pi


def make_env(name):
    """The unwrapped gymnasium environment (no TimeLimit: a pair is one step)."""
    from gymnasium.envs.classic_control.acrobot import AcrobotEnv
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv
    from gymnasium.envs.classic_control.pendulum import PendulumEnv
    env = {"cartpole": CartPoleEnv, "pendulum": PendulumEnv, "acrobot": AcrobotEnv}[name]()
    env.reset(seed=0)
    return env


def gen(name, out_dir, n):
    rng = np.random.default_rng({"cartpole": 1, "pendulum": 2, "acrobot": 3}[name])
    if name == "cartpole":
        # |x| <= 2.4 and |theta| <= 12° bound an episode; go a little beyond both.
        hi = np.array([2.6, 3.0, 0.25, 3.5])
        states = rng.uniform(-hi, hi, size=(n, 4))
        actions = rng.integers(0, 2, size=n).astype(np.int32)
    elif name == "pendulum":
        # theta is never wrapped in the state (angle_normalize only in the cost): several
        # turns; |theta_dot| beyond the clip at 8; torques beyond the clip at 2, and exactly 0, ±2.
        states = np.stack([rng.uniform(-10.0, 10.0, n), rng.uniform(-9.0, 9.0, n)], axis=1)
        actions = rng.uniform(-3.0, 3.0, size=(n, 1)).astype(np.float32)
        actions[:3, 0] = [0.0, -2.0, 2.0]
    else:
        # The observation space's box: angles in [-pi, pi], velocities up to 4 pi and 9 pi.
        hi = np.array([PI, PI, 4 * PI, 9 * PI])
        states = rng.uniform(-hi, hi, size=(n, 4))
        actions = rng.integers(0, 3, size=n).astype(np.int32)
    limit = LIMITS[name]
    elapsed = rng.integers(0, limit, size=n).astype(np.int32)
    elapsed[rng.random(n) < 0.5] = limit - 1
    np.save(os.path.join(out_dir, "states.npy"), states)
    np.save(os.path.join(out_dir, "actions.npy"), actions)
    np.save(os.path.join(out_dir, "elapsed.npy"), elapsed)


LIMITS = {"cartpole": 500, "pendulum": 200, "acrobot": 500}
IDS = {"cartpole": "CartPole-v1", "pendulum": "Pendulum-v1", "acrobot": "Acrobot-v1"}
# The tuple tensor of the step_auto equation in ENV-pairs.trl: the stream of its reset draws.
AUTO_STREAM = "(x2, r2, te2, tr2, el2)"


# Reset ranges: (low, high) per component, and whether gymnasium rounds the draw to float32.
RESETS = {
    "cartpole": ([-0.05] * 4, [0.05] * 4, False),
    "pendulum": ([-PI, -1.0], [PI, 1.0], False),
    "acrobot": ([-0.1] * 4, [0.1] * 4, True),
}


def reset_draw(name, key):
    """gymnasium's reset formula applied to the Philox uniforms of `key`."""
    low, high, to_f32 = RESETS[name]
    low, high = np.array(low), np.array(high)
    s = low + (high - low) * np.array([trl_random.uniform_f64(key, e) for e in range(len(low))])
    return s.astype(np.float32).astype(np.float64) if to_f32 else s


def step_action(name, action):
    return action.copy() if name == "pendulum" else int(action)


def check_auto(name, out_dir, states, actions):
    """step_auto against gym.make(ID): TimeLimit's truncation, then same-step autoreset."""
    import gymnasium as gym
    from gymnasium.wrappers import TimeLimit
    elapsed = np.load(os.path.join(out_dir, "elapsed.npy"))
    auto = np.load(os.path.join(out_dir, "auto.npz"))
    nxt, rew, term, trunc, el = (auto[f"arr_{i}"] for i in range(5))
    env = gym.make(IDS[name])
    env.reset(seed=0)
    limit = env
    while not isinstance(limit, TimeLimit):
        limit = limit.env
    assert limit._max_episode_steps == LIMITS[name]
    both = ends = 0
    for i in range(len(nxt)):
        env.unwrapped.state = states[i].copy()
        if name == "cartpole":
            env.unwrapped.steps_beyond_terminated = None
        limit._elapsed_steps = int(elapsed[i])
        _, g_rew, g_term, g_trunc, _ = env.step(step_action(name, actions[i]))
        assert rew[i] == np.float32(g_rew), (name, i, rew[i], g_rew)
        assert (bool(term[i]), bool(trunc[i])) == (g_term, g_trunc), (name, i, term[i], trunc[i])
        if g_term or g_trunc:
            ends += 1
            both += g_term and g_trunc
            expect = reset_draw(name, trl_random.rng(0, AUTO_STREAM, i))
            assert np.array_equal(nxt[i], expect) and el[i] == 0, (name, i, nxt[i], expect, el[i])
        else:
            err = np.max(np.abs(nxt[i] - np.asarray(env.unwrapped.state, dtype=np.float64)))
            assert err <= 1e-12 and el[i] == elapsed[i] + 1, (name, i, err, el[i], elapsed[i])
    return len(nxt), ends, both


def check_resets(name, resets, stream):
    low, high, to_f32 = RESETS[name]
    low, high = np.array(low), np.array(high)
    n, k = resets.shape
    # A draw rounded to float32 may reach float32(high), as gymnasium's may.
    top = np.all(resets <= high.astype(np.float32)) if to_f32 else np.all(resets < high)
    assert np.all(resets >= low) and top, f"{name}: a reset state is out of range"
    # The spread covers the range (10,000 uniform draws come within 1% of both ends).
    span = high - low
    assert np.all(resets.min(axis=0) < low + 0.01 * span), resets.min(axis=0)
    assert np.all(resets.max(axis=0) > high - 0.01 * span), resets.max(axis=0)
    for i in range(0, n, max(1, n // 200)):        # 200 of them bit for bit
        expect = reset_draw(name, trl_random.rng(0, stream, i))
        assert np.array_equal(resets[i], expect), (name, i, resets[i], expect)


def check(name, out_dir):
    states = np.load(os.path.join(out_dir, "states.npy"))
    actions = np.load(os.path.join(out_dir, "actions.npy"))
    out = np.load(os.path.join(out_dir, "out.npz"))
    nxt, rew, term, obs, resets = (out[f"arr_{i}"] for i in range(5))
    n = len(states)
    assert nxt.shape == states.shape and nxt.dtype == np.float64, (nxt.shape, nxt.dtype)
    assert rew.shape == (n,) and rew.dtype == np.float32, (rew.shape, rew.dtype)
    assert term.shape == (n,) and term.dtype == np.bool_, (term.shape, term.dtype)
    assert obs.dtype == np.float32, obs.dtype
    cost = out["arr_5"] if name == "pendulum" else None

    cr_math.patch()
    env = make_env(name)
    pow_wrong = 0
    max_err = 0.0
    bitwise = terminations = 0
    for i in range(n):
        env.unwrapped.state = states[i].copy()
        if name == "cartpole":
            env.unwrapped.steps_beyond_terminated = None
        g_obs, g_rew, g_term, g_trunc, _ = env.step(step_action(name, actions[i]))
        g_state = np.asarray(env.unwrapped.state, dtype=np.float64)
        err = float(np.max(np.abs(nxt[i] - g_state)))
        assert err <= 1e-12, f"{name} pair {i}: next state {nxt[i]} vs gymnasium {g_state}"
        max_err = max(max_err, err)
        bitwise += bool(np.array_equal(nxt[i], g_state))
        assert rew[i] == np.float32(g_rew), f"{name} pair {i}: reward {rew[i]} vs {g_rew}"
        if cost is not None:
            cr_cost, pow_right = cr_math.pendulum_cost_cr(states[i][0], states[i][1],
                                                           np.clip(actions[i], -2.0, 2.0)[0])
            want = -g_rew if pow_right else cr_cost
            pow_wrong += not pow_right
            assert cost[i] == want, f"{name} pair {i}: cost {cost[i]!r} vs {want!r}"
        assert bool(term[i]) == g_term and not g_trunc, f"{name} pair {i}: terminated {term[i]}"
        terminations += g_term
        assert g_obs.dtype == np.float32 and np.array_equal(obs[i], g_obs), \
            f"{name} pair {i}: obs {obs[i]} vs gymnasium {g_obs}"
    check_resets(name, resets, "rs")
    extra = ", costs equal in float64" if cost is not None else ""
    print(f"{name}: {n} pairs: next states within {max_err:.1e} ({bitwise} bitwise equal), "
          f"rewards equal{extra}, terminated equal ({terminations} terminations), "
          f"observations equal; {len(resets)} reset states in range")
    m, ends, both = check_auto(name, out_dir, states, actions)
    print(f"{name}: step_auto on {m} pairs equals TimeLimit + SAME_STEP autoreset: "
          f"{ends} episode ends, {both} both terminated and truncated")
    print(cr_math.summary() + (f"; {pow_wrong} costs where glibc's pow or powf(x, 2) is not x * x rounded once"
                               if cost is not None else ""))


def main(argv):
    if len(argv) == 5 and argv[1] == "gen":
        gen(argv[2], argv[3], int(argv[4]))
    elif len(argv) == 4 and argv[1] == "check":
        check(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
