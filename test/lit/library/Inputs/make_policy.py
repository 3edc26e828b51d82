"""Write a deterministic stand-in for ppo_cartpole_policy.npz (same 12 members and shapes as
samples/ppo_cartpole.trl saves) whose actor balances the pole, so that a deployment test can
run without training first:

    python3 make_policy.py OUT.npz [SEED]

The actor's first hidden unit computes a linear controller tanh(0.5·x + 1·x_dot + 10·θ + 2·θ_dot)
(weights chosen by hand; it keeps CartPole up for whole 500-step episodes), the second layer
passes it on, and the head turns it into logits (−u, u), so the action is 1 when u > 0.  The
other units are random (seed) with small output weights: they perturb the logits as a trained
network's would.  The critic is random.
"""
import sys

import numpy as np


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    f = np.float32
    w1 = (rng.standard_normal((4, 64)) * 0.5).astype(f)
    w1[:, 0] = [0.5, 1.0, 10.0, 2.0]
    b1 = (rng.standard_normal(64) * 0.1).astype(f)
    b1[0] = 0
    w2 = (rng.standard_normal((64, 64)) * 0.2).astype(f)
    w2[0, :] = 0
    w2[:, 0] = 0
    w2[0, 0] = 3.0
    b2 = (rng.standard_normal(64) * 0.05).astype(f)
    b2[0] = 0
    w3 = (rng.standard_normal((64, 2)) * 0.01).astype(f)
    w3[0] = [-2.0, 2.0]
    b3 = np.zeros(2, dtype=f)
    critic = [(rng.standard_normal(s) * 0.1).astype(f) for s in [(4, 64), (64,), (64, 64), (64,), (64, 1), (1,)]]
    np.savez(out, w1, b1, w2, b2, w3, b3, *critic)


if __name__ == "__main__":
    main()
