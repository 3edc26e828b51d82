"""Check random-streams.trl's output against trl_random.py (the §8 text, reimplemented)."""
import json
import os
import sys

# f32 values are printed as the shortest decimal that rounds back to the float: compare as f32.
sys.path.insert(0, os.path.dirname(__file__))
import trl_random as R  # noqa: E402

path, seed = sys.argv[1], int(sys.argv[2])
rows = [json.loads(l) for l in open(path)]
assert len(rows) == 4
for row in rows:
    t = row["t"]
    ku = R.rng(seed, "u", t, 7)
    assert [R.f32(x) for x in row["u"]] == [R.uniform_f32(ku, e) for e in range(6)], (row["u"], t)
    kv = R.rng(seed, "v", t)
    assert row["v"] == [R.uniform_f64(kv, e) for e in range(3)], (row["v"], t)
    kz = R.rng(seed, "z", t)
    assert row["z"] == [R.normal_f64(kz, e) for e in range(2)], (row["z"], t)
    kw = R.rng(seed, "w", t, 7)  # fold_in(rng(t), 7) == rng(t, 7), in w's own stream
    assert [R.f32(x) for x in row["w"]] == [R.uniform_f32(kw, e) for e in range(6)], (row["w"], t)
    kc = R.rng(seed, "c", t)
    logits = [[0.0, 1.0, 2.0], [-1.0, 0.5, 0.0]]
    assert row["c"] == [R.categorical(kc, r, logits[r]) for r in range(2)], (row["c"], t)
# u and w draw from equal coordinates in different tensors: different streams.
assert rows[0]["u"] != rows[0]["w"]
print("ok: 4 points, uniform f32/f64, normal f64, fold_in and categorical match")
