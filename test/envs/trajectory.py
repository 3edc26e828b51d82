"""Replay a .trl rollout of dsl/std/envs (step_auto, fixed policies) through gymnasium.

    trajectory.py ENV LOG B T

LOG holds the JSON Lines of a test/lit/envs/ENV-trajectory.trl program: one record per (env b,
step t) with state, obs, elapsed, action, reward, terminated, truncated, final (the state the
step reached), final_obs, next (the state of step t+1) and elapsed_next.

The replay is independent of the program's numbers: B copies of gym.make("<Env>-v1") (with
its TimeLimit) run in a gymnasium.vector.SyncVectorEnv with autoreset_mode SAME_STEP; every
initial and reset state is set to the Philox draw that dsl/README.md §8 defines for the
program's key (recomputed by test/lit/interp/Inputs/trl_random.py) mapped through gymnasium's
reset formula, and every action is recomputed in numpy float32 from gymnasium's observation by
the same fixed policy.  Checked per step: the action, reward (exact, as float32), terminated and
truncated (exact), the observation (equal as float32), the states (within 1e-12 in float64), the
final observation gymnasium reports in info["final_obs"], the elapsed-step counter, and that the
next state is the reset draw exactly when the episode ended.  gymnasium runs with correctly
rounded sin and cos (cr_math.patch), as trlc computes them.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lit", "interp", "Inputs"))
import trl_random  # noqa: E402
import cr_math  # noqa: E402

warnings.filterwarnings("ignore")
import gymnasium as gym  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

F32 = np.float32
IDS = {"cartpole": "CartPole-v1", "pendulum": "Pendulum-v1", "acrobot": "Acrobot-v1"}
# The tensor whose equation draws the initial state, and the one of the step_auto call.
INIT_STREAM = "st"
STEP_STREAM = "(s2, rew, term, trunc, el2)"


def reset_state(name, key):
    """gymnasium's reset formula low + (high - low) * u on the program's Philox uniforms."""
    if name == "cartpole":
        low, high, k = np.full(4, -0.05), np.full(4, 0.05), 4
    elif name == "pendulum":
        low, high, k = np.array([-np.pi, -1.0]), np.array([np.pi, 1.0]), 2
    else:
        low, high, k = np.full(4, -0.1), np.full(4, 0.1), 4
    u = np.array([trl_random.uniform_f64(key, e) for e in range(k)])
    s = low + (high - low) * u
    return s.astype(np.float32).astype(np.float64) if name == "acrobot" else s


def observe(name, env):
    """The observation of the env's current state, by gymnasium's own code."""
    u = env.unwrapped
    if name == "cartpole":
        return np.array(u.state, dtype=np.float32)
    return u._get_obs() if name == "pendulum" else u._get_ob()


def policy(name, o, b, t):
    """The fixed policies of the .trl programs, in numpy float32 arithmetic (NEP 50)."""
    if name == "cartpole":
        if b % 2 == 0:
            return int(o[2] + 0.5 * o[3] + 0.01 * o[0] + 0.1 * o[1] > 0.0)
        return int(o[2] > 0.0)
    if name == "pendulum":
        u = -2.0 * o[1] - 0.5 * o[2] if b % 2 == 0 else F32(t % 5) - 2.0
        assert u.dtype == np.float32
        return np.array([u], dtype=np.float32)
    if b % 2 == 0:
        return 2 if o[5] > 0.0 else 0
    return t % 3


class RecordFinal(gym.Wrapper):
    """Keeps the float64 state a step reached (SAME_STEP resets it before step() returns)."""

    def step(self, action):
        out = self.env.step(action)
        self.final_state = np.array(self.env.unwrapped.state, dtype=np.float64)
        return out


def close(a, b):
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))))


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    name, path, B, T = argv[1], argv[2], int(argv[3]), int(argv[4])
    rows = [json.loads(line) for line in open(path)]
    assert len(rows) == B * T, f"expected {B * T} records, got {len(rows)}"
    assert [(r["env"], r["t"]) for r in rows] == [(b, t) for b in range(B) for t in range(T)]
    rec = {(r["env"], r["t"]): r for r in rows}

    cr_math.patch()
    vec = SyncVectorEnv([lambda: RecordFinal(gym.make(IDS[name])) for _ in range(B)],
                        autoreset_mode=AutoresetMode.SAME_STEP)
    vec.reset(seed=0)
    envs = vec.envs
    elapsed = [0] * B
    for b in range(B):
        s0 = reset_state(name, trl_random.rng(0, INIT_STREAM, b, 0))
        envs[b].unwrapped.state = s0.copy()
        assert np.array_equal(np.array(rec[b, 0]["state"]), s0), (b, rec[b, 0]["state"], s0)

    max_err = 0.0
    terminated = truncated = 0
    for t in range(T):
        obs = [observe(name, envs[b]) for b in range(B)]
        actions = [policy(name, obs[b], b, t) for b in range(B)]
        for b in range(B):
            r = rec[b, t]
            max_err = max(max_err, close(r["state"], envs[b].unwrapped.state))
            assert max_err <= 1e-12, f"b={b} t={t}: state {r['state']} vs {envs[b].unwrapped.state}"
            assert np.array_equal(np.array(r["obs"], dtype=np.float32), obs[b]), (b, t, r["obs"])
            if name == "pendulum":
                assert F32(r["action"]) == actions[b][0], (b, t, r["action"], actions[b])
            else:
                assert r["action"] == actions[b], (b, t, r["action"], actions[b])
            assert r["elapsed"] == elapsed[b], (b, t, r["elapsed"], elapsed[b])
        batch = np.stack(actions) if name == "pendulum" else np.array(actions)
        _, rew, term, trunc, info = vec.step(batch)
        for b in range(B):
            r = rec[b, t]
            assert F32(r["reward"]) == F32(rew[b]), (b, t, r["reward"], rew[b])
            assert r["terminated"] == bool(term[b]), (b, t, "terminated", r["terminated"])
            assert r["truncated"] == bool(trunc[b]), (b, t, "truncated", r["truncated"])
            final = envs[b].final_state
            max_err = max(max_err, close(r["final"], final))
            assert max_err <= 1e-12, f"b={b} t={t}: final state {r['final']} vs {final}"
            elapsed[b] += 1
            if term[b] or trunc[b]:
                terminated += bool(term[b])
                truncated += bool(trunc[b])
                assert np.array_equal(np.array(r["final_obs"], dtype=np.float32),
                                      info["final_obs"][b]), (b, t, "final_obs")
                s = reset_state(name, trl_random.rng(0, STEP_STREAM, b, t + 1))
                envs[b].unwrapped.state = s.copy()
                assert np.array_equal(np.array(r["next"]), s), (b, t, "reset", r["next"], s)
                elapsed[b] = 0
            else:
                max_err = max(max_err, close(r["next"], envs[b].unwrapped.state))
                assert max_err <= 1e-12, f"b={b} t={t}: next state {r['next']}"
            assert r["elapsed_next"] == elapsed[b], (b, t, r["elapsed_next"], elapsed[b])
            if t + 1 < T:
                assert rec[b, t + 1]["state"] == r["next"], (b, t, "next is the state of t+1")
    print(f"{name}: {B * T} steps equal gymnasium's SyncVectorEnv (SAME_STEP), states within "
          f"{max_err:.1e}, {terminated} terminated, {truncated} truncated")
    print(cr_math.summary())


if __name__ == "__main__":
    main(sys.argv)
