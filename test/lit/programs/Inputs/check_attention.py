"""check_attention.py OUT.jsonl — attention.trl's records against numpy (float64) from the same
q, k, v: causal and window attention, the previous step's weights, the gradient, and the
emitted attention rows' lengths (t + 1), and sum(cum[2t]) = 0 + 1 + ... + 2t."""
import json
import sys

import numpy as np

B, T, D, W = 2, 7, 4, 3
recs = [json.loads(line) for line in open(sys.argv[1])]
assert len(recs) == B * T, len(recs)
q = np.array([r["q"] for r in recs], np.float64).reshape(B, T, D)
k = np.array([r["k"] for r in recs], np.float64).reshape(B, T, D)
v = np.array([r["v"] for r in recs], np.float64).reshape(B, T, D)


def softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


err = 0.0
for b in range(B):
    for t in range(T):
        r = recs[b * T + t]
        att = softmax(k[b, : t + 1] @ q[b, t] / np.sqrt(D))
        assert len(r["att"]) == t + 1, (b, t, len(r["att"]))
        lo = max(t - W + 1, 0)
        watt = softmax(k[b, lo : t + 1] @ q[b, t])
        prev = 0.0
        if t >= 1:
            patt = softmax(k[b, :t] @ q[b, t - 1] / np.sqrt(D))
            prev = float((patt * np.arange(t)).sum())
        a = np.tanh(k[b, : t + 1] * q[b, t])
        g = (2 * a * (1 - a * a) * k[b, : t + 1]).sum(0)
        far = t * (2 * t + 1) if 2 * t < T else -1.0
        for got, want in ((r["att"], att), ([r["far"]], [far]), (r["out"], att @ v[b, : t + 1]), (r["wout"], watt @ v[b, lo : t + 1]),
                          ([r["prev"]], [prev]), (r["g"], g)):
            err = max(err, float(np.abs(np.array(got) - np.array(want)).max()))
assert err < 1e-5, err
print("ok: causal and window attention, the previous step's weights, a read at 2t and the gradient within 1e-5 of numpy")
