#!/usr/bin/env python3
"""Gradient checks of trlc's autodiff against central finite differences (f64).

    gradcheck.py TRLC DIR [-j N] [--filter SUBSTR,…] [--scheduled]

For each program of programs.py: write prog.trl and its inputs (x.npy and the others, random
with a fixed seed) to DIR/<name>/, run `TRLC prog.trl --interpret` to get y and g = grad(y, x),
then rerun with x ± h·v (h = 1e-6) for every unit vector v (for more than 6 elements: 4
random directions) and compare g·v with the central difference (y+ - y-) / 2h: |g - fd| <= 1e-6 |fd| + 1e-8 max(1, |y|) (the absolute term covers
the rounding of y, about 1e-16 |y| / h).  Prints one line per failing program and a summary
"N passed, M failed"; exit status 1 if any failed.  --scheduled checks instead that
`--interpret=scheduled` (the schedule and memory plan of the adjoint program) prints exactly
what `--interpret` prints.
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import programs  # noqa: E402

H = 1e-6


def shape_text(s):
    return "f64[" + ", ".join(str(d) for d in s) + "]" if s else "f64"


def source(p):
    lines = ["load x : %s from \"x.npy\"" % shape_text(p["x"])]
    for name, shape in p["inputs"].items():
        if name.endswith("_int"):
            lines.append("load %s : i32[%s] from \"%s.npy\"" % (name[:-4], ", ".join(map(str, shape)), name[:-4]))
        else:
            lines.append("load %s : %s from \"%s.npy\"" % (name, shape_text(shape), name))
    lines.append(p["body"])
    if "loss[i]" in p["body"]:
        lines.append('emit "out"[i] { y: loss[i], g: g[i] }')
    else:
        lines.append("g = grad(y, x)")
        lines.append('emit "out" { y: y, g: g }')
    return "\n".join(lines) + "\n"


def flat(v):
    if isinstance(v, list):
        out = []
        for e in v:
            out.extend(flat(e))
        return out
    return [float(v)]


def run(trlc, d, x):
    np.save(os.path.join(d, "x.npy"), x)
    r = subprocess.run([trlc, "prog.trl", "--interpret"], cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("trlc failed (%d): %s" % (r.returncode, r.stderr.strip()[:2000]))
    return [json.loads(l) for l in r.stdout.splitlines()]


def check(trlc, root, p, seed, scheduled=False):
    d = os.path.join(root, p["name"])
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(seed)
    with open(os.path.join(d, "prog.trl"), "w") as f:
        f.write(source(p))
    for name, shape in p["inputs"].items():
        if name.endswith("_int"):
            np.save(os.path.join(d, name[:-4] + ".npy"), rng.integers(0, 2, size=shape).astype(np.int32))
        else:
            np.save(os.path.join(d, name + ".npy"), rng.normal(size=shape))
    x = rng.normal(size=p["x"])
    if p["pos"]:
        x = np.abs(x) + 0.5
    try:
        if scheduled:  # the same output from the schedule and the memory plan, no differences
            np.save(os.path.join(d, "x.npy"), x)
            outs = [subprocess.run([trlc, "prog.trl"] + mode, cwd=d, capture_output=True, text=True)
                    for mode in (["--interpret"], ["--interpret=scheduled"])]
            if outs[0].returncode or outs[1].returncode or outs[0].stdout != outs[1].stdout:
                return "%s: --interpret=scheduled differs: %s" % (p["name"], outs[1].stderr.strip()[:500])
            return None
        base = run(trlc, d, x)
        per_point = len(base) > 1 or "loss[i]" in p["body"]
        rows = x.reshape(len(base), -1) if per_point else x.reshape(1, -1)
        gs = []
        for k, line in enumerate(base):
            g = np.array(flat(line["g"]))
            if g.size != rows[k].size:
                return "%s: g has %d elements, x%s %d" % (p["name"], g.size, "[k]" if per_point else "", rows[k].size)
            gs.append(g)
        gs = np.array(gs)
        ys = np.array([float(l["y"]) for l in base])
        n = rows.shape[1]
        # Directions: each element alone (every row at once: y_k depends on row k only), or
        # for more than 6 elements per row, 4 random directions.
        dirs = list(np.eye(n)) if n <= 6 else list(rng.normal(size=(4, n)))
        for j, v in enumerate(dirs):
            dx = np.tile(v, (rows.shape[0], 1))
            yp = np.array([float(l["y"]) for l in run(trlc, d, (rows + H * dx).reshape(x.shape))])
            ym = np.array([float(l["y"]) for l in run(trlc, d, (rows - H * dx).reshape(x.shape))])
            fd = (yp - ym) / (2 * H)
            an = gs @ v
            for k in range(len(ys)):
                if not abs(an[k] - fd[k]) <= 1e-6 * abs(fd[k]) + 1e-8 * max(1.0, abs(ys[k])):
                    return "%s: point %d direction %d: grad %r, finite difference %r" % (p["name"], k, j, an[k], fd[k])
        return None
    except Exception as e:  # noqa: BLE001
        return "%s: %s" % (p["name"], e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trlc")
    ap.add_argument("dir")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--filter", default="", help="only programs whose name contains any of "
                    "these comma-separated substrings")
    ap.add_argument("--scheduled", action="store_true", help="instead of finite differences, "
                    "check that --interpret=scheduled prints what --interpret prints")
    a = ap.parse_args()
    a.trlc = os.path.abspath(a.trlc)
    ps = [p for p in programs.programs() if any(f in p["name"] for f in a.filter.split(","))]
    with ThreadPoolExecutor(a.j) as ex:
        res = list(ex.map(lambda kp: check(a.trlc, a.dir, kp[1], kp[0], a.scheduled), enumerate(ps)))
    bad = [r for r in res if r]
    for r in bad:
        print("FAIL", r)
    print("%d passed, %d failed" % (len(res) - len(bad), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
