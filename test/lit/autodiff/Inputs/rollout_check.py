"""Checks a differentiable-rollout log (JSON Lines {"i", "loss"}): the first loss (torques all
zero) equals the summed cost of gymnasium's Pendulum-v1 stepped 60 times with action 0 from
(th, thdot) = (3.0, 0.0), and the last loss is below 0.7 of the first.

    rollout_check.py LOG
"""
import json
import sys

import gymnasium as gym
import numpy as np

rows = [json.loads(line) for line in open(sys.argv[1])]
env = gym.make("Pendulum-v1").unwrapped
env.reset(seed=0)
env.state = np.array([3.0, 0.0])
total = 0.0
for _ in range(60):
    _, r, _, _, _ = env.step(np.array([0.0]))
    total += -float(r)
first, last = rows[0]["loss"], rows[-1]["loss"]
ok_first = abs(first - total) <= 1e-9 * total
print("first loss %s gymnasium: %.12f vs %.12f" % ("matches" if ok_first else "DIFFERS from",
                                                   first, total))
print("last loss %s: %.6f of the first" % ("decreased" if last < 0.7 * first else "did NOT decrease",
                                           last / first))
