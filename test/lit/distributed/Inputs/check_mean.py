#!/usr/bin/env python3
"""check_mean.py LOG N [ONE]: the records of Inputs/mean_sgd.trl run as N ranks.

Every record starts with "rank"; the records are in (point, rank) order; on each step every
rank holds the same g and w; x differs between the ranks; g is the mean of the ranks' x summed in
rank order in f32 and divided by N (trl_allreduce_mean's order); w[i+1] = w[i] - 0.5 * g[i] in
f32.  With ONE (the log of the program run as one process) rank 0's x equals the one process's
x: rank 0 draws the one-process streams.  Prints "ok: S steps x N ranks" or fails."""
import json
import sys

import numpy as np

log, n = sys.argv[1], int(sys.argv[2])
recs = [json.loads(l) for l in open(log)]
assert all(list(r)[0] == "rank" for r in recs), "a record without a leading rank"
steps = len(recs) // n
assert len(recs) == steps * n and steps > 1, len(recs)
f32 = np.float32
for s in range(steps):
    rs = recs[s * n:(s + 1) * n]
    assert [r["rank"] for r in rs] == list(range(n)), [r["rank"] for r in rs]
    xs = [np.array(r["x"], dtype=f32) for r in rs]
    for r in rs[1:]:
        assert r["g"] == rs[0]["g"] and r["w"] == rs[0]["w"], f"step {s}: ranks differ"
    if n > 1:
        assert any((xs[k] != xs[0]).any() for k in range(1, n)), f"step {s}: every rank drew the same x"
    acc = xs[0].copy()
    for x in xs[1:]:
        acc = (acc + x).astype(f32)
    mean = (acc / f32(n)).astype(f32)
    assert (mean == np.array(rs[0]["g"], dtype=f32)).all(), f"step {s}: g {rs[0]['g']} != mean {mean}"
    if s + 1 < steps:
        w = np.array(rs[0]["w"], dtype=f32)
        assert ((w - f32(0.5) * mean).astype(f32) == np.array(recs[(s + 1) * n]["w"], dtype=f32)).all()
if len(sys.argv) > 3:
    one = [json.loads(l) for l in open(sys.argv[3])]
    assert [r["x"] for r in one] == [recs[s * n]["x"] for s in range(steps)], "rank 0 drew other numbers"
print(f"ok: {steps} steps x {n} ranks")
