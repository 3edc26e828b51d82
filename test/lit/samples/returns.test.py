"""Check ret[t] = sum_k gamma^k * reward[t+k] for every emitted line (closed form)."""
import json
import sys

path, gamma, T = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
rows = [json.loads(line) for line in open(path)]
assert [r["t"] for r in rows] == list(range(T)), "expected one line per step, in order"
rewards = [r["reward"] for r in rows]
assert all(0.0 <= x < 1.0 for x in rewards), "rewards are uniform in [0, 1)"
assert len(set(rewards)) == T, "rewards should differ between steps"
for t, row in enumerate(rows):
    closed = sum(gamma ** k * rewards[t + k] for k in range(T - t))
    err = abs(row["ret"] - closed)
    assert err <= 1e-6 * max(1.0, abs(closed)), f"t={t}: ret {row['ret']} vs closed form {closed}"
print(f"ok: {T} returns match the closed form")
