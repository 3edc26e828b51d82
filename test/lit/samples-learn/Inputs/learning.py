#!/usr/bin/env python3
"""learning.py — does a CartPole sample's JSON Lines log show learning?

Reads the episode records (those with "episodic_return") and the "train" records (the other
records with "env_steps", as tools/trl_metrics.py reads them) of LOG, prints

    train lines: N, last env_steps: S
    learned: first-100 mean A < X, last-100 mean B > Y

and exits 0 when both inequalities hold, else prints "not learned: …" and exits 1.  The means
are over the first and the last 100 finished episodes in log order (= env-step order).
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("log")
ap.add_argument("--first-below", type=float, required=True)
ap.add_argument("--last-above", type=float, required=True)
ap.add_argument("--window", type=int, default=100)
a = ap.parse_args()

rets, train, steps = [], 0, 0
with open(a.log) as f:
    for line in f:
        r = json.loads(line)
        if "episodic_return" in r:
            rets.append(float(r["episodic_return"]))
        elif "env_steps" in r:
            train += 1
            steps = max(steps, int(r["env_steps"]))
print(f"train lines: {train}, last env_steps: {steps}")
if len(rets) < 2 * a.window:
    print(f"not learned: only {len(rets)} finished episodes")
    sys.exit(1)
first = sum(rets[:a.window]) / a.window
last = sum(rets[-a.window:]) / a.window
ok = first < a.first_below and last > a.last_above
print(f"{'learned' if ok else 'not learned'}: first-{a.window} mean {first:.2f} "
      f"{'<' if first < a.first_below else '>='} {a.first_below:g}, last-{a.window} mean {last:.2f} "
      f"{'>' if last > a.last_above else '<='} {a.last_above:g}")
sys.exit(0 if ok else 1)
