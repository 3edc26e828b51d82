"""check_profile.py FILE.json: the structure of a --profile file (runtime/rt/trl_profile.cpp)
and its sums: every region's categories add up to its seconds, the groups to the regions', and
the regions, the time outside them and the host control to the wall time (the host control is
the wall time not in a timed call, so never negative).  Prints one line per check."""
import json
import sys

d = json.load(open(sys.argv[1]))
cats = d["categories"]
assert cats == ["kernels", "products", "copies", "io", "waiting", "communication"], cats
for key in ["program", "source", "wall_seconds", "measured_seconds", "uncorrected_seconds", "other_seconds",
            "outside_regions_seconds", "events", "event_cost_seconds", "overhead_seconds", "groups", "regions",
            "balance"]:
    assert key in d, key
print("keys: ok")
tol = 1e-4
for r in d["regions"]:
    assert set(r) == {"name", "group", "where", "side", "events", "seconds", "by_category"}, r
    assert r["side"] in ("actor", "learner", "-"), r
    assert abs(sum(r["by_category"][c] for c in cats) - r["seconds"]) < tol, r
    assert r["events"] > 0 and ":" in r["where"], r
print("regions: %d, each the sum of its categories" % len(d["regions"]))
by_group = {}
for r in d["regions"]:
    by_group[r["group"]] = by_group.get(r["group"], 0.0) + r["seconds"]
for g in d["groups"]:
    assert abs(g["seconds"] - by_group.get(g["group"], 0.0)) < tol * max(1, len(d["regions"])), g
print("groups: " + ", ".join(sorted(g["group"] for g in d["groups"] if g["seconds"] > 0)))
total = sum(r["seconds"] for r in d["regions"]) + d["outside_regions_seconds"]
assert abs(total - d["measured_seconds"]) < 1e-3, (total, d["measured_seconds"])
assert d["other_seconds"] >= 0
assert d["measured_seconds"] + d["other_seconds"] >= d["wall_seconds"] - 1e-3
assert d["measured_seconds"] <= d["wall_seconds"] * 1.05 + 1e-3, (d["measured_seconds"], d["wall_seconds"])
print("sums: regions + outside + host control = wall")
b = d["balance"]
assert b["iterations"] > 0 and b["learner_seconds_per_iteration"] >= 0, b
print("balance: %d iterations" % b["iterations"])
