#!/usr/bin/env python3
"""plot_profile.py — RL-Scope's stacked bars from a generated program's `--profile FILE.json`.

One bar per group of regions (acting, environment step, returns/advantages, loss and gradient,
optimizer, metrics, other, and the host control outside every timed call), its height the
group's seconds, split by category (kernels, products, copies, io, waiting, communication);
the title gives the program, its wall time and the actor/learner balance
(runtime/rt/trl_profile.cpp).

    python3 tools/plot_profile.py prof.json -o profile.png
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profile", help="the JSON written by `prog --profile FILE.json`")
    ap.add_argument("-o", "--output", required=True, help="the PNG to write")
    a = ap.parse_args()
    try:
        with open(a.profile) as f:
            d = json.load(f)
        cats = d["categories"]
        groups = [g for g in d["groups"] if g["seconds"] > 0]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"plot_profile.py: {a.profile} is not a profile of a trlc program: {e}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [g["group"] for g in groups] + ["host control"]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(names)), 4.5))
    bottom = [0.0] * len(names)
    for c in cats:
        vals = [g["by_category"][c] for g in groups] + [0.0]
        ax.bar(names, vals, bottom=bottom, label=c)
        bottom = [b + v for b, v in zip(bottom, vals)]
    host = d["other_seconds"] + d.get("outside_regions_seconds", 0.0)
    ax.bar(names[-1:], [host], bottom=[0.0], label="host control", color="lightgray")
    b = d.get("balance", {})
    ax.set_ylabel("seconds")
    ax.set_title(f"{d['program']}: {d['wall_seconds']:.2f} s wall, "
                 f"actor/learner {b.get('actor_per_learner', 0):.2f} per iteration", fontsize=10)
    ax.legend(fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
