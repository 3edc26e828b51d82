#!/usr/bin/env python3
"""compare — run each .trl file under `trlc --interpret`, `--interpret=scheduled` and
`--interpret=scheduled -fno-vectorize`; print `same: NAME (L lines)` when the three stdouts and
exit codes are identical and the output is non-empty (or --allow-empty is given), else
`DIFF: NAME: why`.  Exit 1 on any difference.
Usage: compare.py [--allow-empty] TRLC FILE... [-- extra trlc flags]"""
import os
import subprocess
import sys

args = sys.argv[1:]
extra = []
if "--" in args:
    extra = args[args.index("--") + 1:]
    args = args[:args.index("--")]
allow_empty = "--allow-empty" in args
args = [a for a in args if a != "--allow-empty"]
trlc, files = args[0], args[1:]
bad = 0
for f in files:
    runs = []
    for v in (["--interpret"], ["--interpret=scheduled"], ["--interpret=scheduled", "-fno-vectorize"]):
        p = subprocess.run([trlc, f] + v + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        runs.append((p.returncode, p.stdout, p.stderr.decode(errors="replace").strip()))
    name = os.path.basename(f)
    (rc0, out0, err0) = runs[0]
    why = None
    if not out0 and not allow_empty:
        why = f"empty point-wise output (exit {rc0}: {err0})"
    for (rc, out, err), v in zip(runs[1:], ["scheduled", "scheduled -fno-vectorize"]):
        if why is None and (rc, out) != (rc0, out0):
            why = f"{v}: exit {rc} vs {rc0}, {'same' if out == out0 else 'different'} output: {err}"
    if why:
        bad += 1
        print(f"DIFF: {name}: {why}")
    else:
        print(f"same: {name} ({len(out0.splitlines())} lines)")
sys.exit(1 if bad else 0)
