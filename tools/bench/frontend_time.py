#!/usr/bin/env python3
"""Benchmark: parse + check + PDG time of trlc per sample (issue target: < 100 ms each).

Runs `trlc FILE --emit=pdg` REPEAT times per sample and reports the median and the minimum
wall time of the whole process (start-up included, so it is an upper bound of the stages).

usage: tools/bench/frontend_time.py [--trlc build/compiler/trlc] [--repeat 10] [FILES...]

Without FILES: every samples/*.trl, then tools/bench/programs/*.trl (compile-time cases).
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or (sorted(glob.glob(os.path.join(ROOT, "samples", "*.trl"))) +
                          sorted(glob.glob(os.path.join(ROOT, "tools", "bench", "programs", "*.trl"))))
    print(f"{'sample':40} {'median ms':>10} {'min ms':>8}  target < 100 ms")
    worst = 0.0
    for f in files:
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            p = subprocess.run([args.trlc, f, "--emit=pdg"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            times.append((time.perf_counter() - t0) * 1000)
            if p.returncode != 0:
                sys.exit(f"{f}: trlc failed:\n{p.stderr.decode()}")
        med = statistics.median(times)
        worst = max(worst, med)
        print(f"{os.path.relpath(f, ROOT):40} {med:10.1f} {min(times):8.1f}  {'ok' if med < 100 else 'SLOW'}")
    print(f"worst median: {worst:.1f} ms")


if __name__ == "__main__":
    main()
