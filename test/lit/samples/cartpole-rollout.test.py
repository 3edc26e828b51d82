"""Replay samples/cartpole_rollout.trl's emitted steps through gymnasium's CartPoleEnv."""
import json
import sys

import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

path, B, T = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [json.loads(line) for line in open(path)]
steps = [r for r in rows if "state" in r]
summary = [r for r in rows if "finished" in r]
assert len(steps) == B * T, f"expected {B * T} step records, got {len(steps)}"
assert [(r["env"], r["t"]) for r in steps] == [(b, t) for b in range(B) for t in range(T)]
assert len(summary) == B

env = CartPoleEnv()
env.reset(seed=0)
checked = resets = 0
for b in range(B):
    finished = 0
    for t in range(T):
        row = steps[b * T + t]
        state = np.array(row["state"], dtype=np.float64)
        assert np.array_equal(np.array(row["obs"], dtype=np.float32), state.astype(np.float32)), row
        if t == 0:
            assert np.all(np.abs(state) < 0.05), f"reset state out of [-0.05, 0.05): {state}"
        env.unwrapped.state = state.copy()
        env.unwrapped.steps_beyond_terminated = None
        _, reward, terminated, _, _ = env.step(row["action"])
        assert row["reward"] == reward, (b, t, row["reward"], reward)
        assert row["terminated"] == terminated, (b, t, row["terminated"], terminated)
        finished += terminated
        if t + 1 < T:
            nxt = np.array(steps[b * T + t + 1]["state"])
            if terminated:
                assert np.all(np.abs(nxt) < 0.05), "after termination the env resets"
                resets += 1
            else:
                err = np.max(np.abs(nxt - env.unwrapped.state))
                assert err <= 1e-12, f"b={b} t={t}: state differs from gymnasium by {err}"
                checked += 1
    assert summary[b]["finished"] == finished, (summary[b], finished)
assert resets > 0, "the fixed policy should fail sometimes in 200 steps, exercising resets"
print(f"ok: {checked} steps equal gymnasium's, {resets} resets")
