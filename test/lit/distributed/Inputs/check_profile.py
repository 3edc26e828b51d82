"""check_profile.py P0.json P1.json ... — the --profile files of a distributed run, one per rank
(rank r's file given r-th): each says its rank and the number of ranks, and the gradient mean
(the regions of group "communication") is timed on every rank, its wait for the other ranks as
"waiting" on at least one of them (the first to arrive waits for the others)."""
import json
import sys

files = sys.argv[1:]
waited = 0.0
for r, path in enumerate(files):
    with open(path) as f:
        p = json.load(f)
    assert p["rank"] == r and p["ranks"] == len(files), (path, p.get("rank"), p.get("ranks"))
    mean = [g for g in p["regions"] if g["group"] == "communication"]
    assert mean, f"{path}: no communication region"
    comm = sum(g["by_category"]["communication"] for g in mean)
    assert comm > 0, f"{path}: the mean has no communication time"
    assert all(g["events"] > 0 for g in mean), path
    waited += sum(g["by_category"]["waiting"] for g in mean)
assert waited > 0, "no rank waited at the mean"
print(f"ok: {len(files)} ranks, the mean timed as waiting and comm")
