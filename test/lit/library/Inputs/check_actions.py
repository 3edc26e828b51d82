"""Check a deployment log against numpy: every action equals the argmax of the saved actor.

    python3 check_actions.py POLICY.npz LOG [--steps N]

POLICY.npz is what samples/ppo_cartpole.trl saves (arr_0..arr_5: the actor's W1 [4, 64], b1,
W2 [64, 64], b2, W3 [64, 2], b3).  LOG has one line per step, "t o0 o1 o2 o3 action done"
(samples/deploy/deploy_cartpole.cpp).  The actor is evaluated here in numpy, independently of
trlc: logits = tanh(tanh(o @ W1 + b1) @ W2 + b2) @ W3 + b3, in float32.  Prints the step count,
the episodes, the actions' counts and the smallest logit margin seen; exit 1 on any mismatch.
"""
import sys

import numpy as np


def main():
    args = sys.argv[1:]
    steps = None
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    policy, log = args
    z = np.load(policy)
    w1, b1, w2, b2, w3, b3 = (z["arr_%d" % k] for k in range(6))
    rows = [line.split() for line in open(log) if line.strip()]
    obs = np.array([[float(v) for v in r[1:5]] for r in rows], dtype=np.float32)
    got = np.array([int(r[5]) for r in rows])
    done = np.array([int(r[6]) for r in rows])
    logits = np.tanh(np.tanh(obs @ w1 + b1) @ w2 + b2) @ w3 + b3
    want = np.argmax(logits, axis=1)
    margin = np.abs(logits[:, 1] - logits[:, 0])
    bad = np.nonzero(got != want)[0]
    print("steps: %d, episodes ended: %d, actions 0/1: %d/%d" %
          (len(rows), int(done.sum()), int((got == 0).sum()), int((got == 1).sum())))
    print("smallest logit margin: %.3g" % margin.min())
    if steps is not None and len(rows) != steps:
        print("FAIL: %d steps, expected %d" % (len(rows), steps))
        return 1
    if len(bad):
        for t in bad[:10]:
            print("FAIL: step %d obs %s: action %d, numpy argmax %d (logits %s)" %
                  (t, obs[t].tolist(), got[t], want[t], logits[t].tolist()))
        return 1
    print("all %d actions equal numpy's argmax" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
