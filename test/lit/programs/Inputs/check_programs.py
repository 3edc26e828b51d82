"""check_programs.py WHAT DIR — independent numpy re-computations for the programs of
test/lit/programs/Inputs, from what `trlc --interpret` wrote into DIR (out.jsonl, saved files).
Prints one "ok: ..." line per check, or raises."""
import json
import os
import sys

import numpy as np

what, d = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(os.path.join(d, "out.jsonl"))]
f32 = np.float32


def gae(rew, val, done, lastv, gamma, lam):
    """GAE(lambda) by CleanRL's backward loop, in float32, with the step done convention."""
    T = len(rew)
    adv = np.zeros(T, f32)
    a = f32(0)
    for t in reversed(range(T)):
        nd = f32(1) - f32(done[t])
        vn = lastv if t == T - 1 else val[t + 1]
        delta = rew[t] + gamma * nd * vn - val[t]
        a = delta if t == T - 1 else delta + gamma * lam * nd * a
        adv[t] = a
    return adv


if what == "a2c":
    dones = 0
    for r in rows:
        adv = gae(np.array(r["rew0"], f32), np.array(r["val0"], f32), np.array(r["done0"]),
                  f32(r["lastv0"]), f32(0.99), f32(0.95))
        # The same float32 operations in the same order: equal bits.
        assert adv.tolist() == np.array(r["adv0"], f32).tolist(), (r["i"], adv, r["adv0"])
        dones += int(np.sum(r["done0"]))
    print(f"ok: gae of {len(rows)} iterations equal, {dones} dones")
elif what == "adam":
    z = np.load(os.path.join(d, "adam.npz"))
    X, Y = z["arr_2"], z["arr_3"]
    w, m, v = np.zeros(3), np.zeros(3), np.zeros(3)
    for i, r in enumerate(rows):
        g = 2 * X.T @ (X @ w - Y) / len(Y)
        assert np.allclose(g, r["g"], rtol=1e-12, atol=1e-14), (i, g, r["g"])
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - 0.05 * (m / (1 - 0.9 ** (i + 1))) / (np.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-8)
    assert np.max(np.abs(w - z["arr_0"])) < 1e-12, (w, z["arr_0"])
    assert np.max(np.abs(w - z["arr_1"])) < 1e-4, (w, z["arr_1"])  # std.optim.adam in f32
    assert np.linalg.norm(w - [1.5, -2.0, 0.25]) < np.linalg.norm([1.5, -2.0, 0.25])  # it learns
    print(f"ok: f64 Adam over {len(rows)} steps within 1e-12 of numpy; f32 std.optim.adam within 1e-4")
elif what == "mixed":
    z = np.load(os.path.join(d, "ret.npz"))
    ret, rew = z["arr_0"], z["arr_1"]
    assert ret.dtype == np.float64 and rew.dtype == np.float32
    B, T = ret.shape
    R = np.zeros((B, T))
    for b in range(B):
        for t in reversed(range(T)):
            reset = (t + 1) % (4 + b) == 0
            R[b, t] = float(rew[b, t]) + (0.0 if t == T - 1 or reset else 0.95 * R[b, t + 1])
    assert (R == ret).all(), np.abs(R - ret).max()
    assert abs(rows[0]["mret64"] - R.mean()) < 1e-12 and abs(rows[0]["mret32"] - R.mean()) < 1e-5
    print(f"ok: f64 returns of {B}x{T} from f32 rewards equal")
elif what == "rl":
    r = rows[2]
    rew, val, dn = [np.array(a) for a in r["in"]]
    rew, val = rew.astype(f32), val.astype(f32)
    g, lam, nv, T = f32(0.9), f32(0.8), f32(0.5), len(rew)
    G = np.zeros(T, f32)
    G[T - 1] = rew[T - 1]
    for t in reversed(range(T - 1)):
        G[t] = rew[t] + g * f32(1 - dn[t]) * G[t + 1]
    A = gae(rew, val, dn, nv, g, lam)
    # std.rl computes through discounted_cumsum (another order): float32 rounding only.
    assert np.max(np.abs(G - r["r"][0])) < 1e-6 and np.max(np.abs(A - r["r"][3])) < 1e-6
    print("ok: discounted returns and gae within 1e-6")
