#!/usr/bin/env python3
"""Benchmark: schedule + memory-plan time of trlc per sample (issue 3 target: < 1 s each).

For each sample, runs `trlc FILE --emit=pdg`, `--emit=schedule` and `--emit=memplan`
REPEAT times each and reports the median wall time of the whole process for each, and
    schedule  = median(--emit=schedule) - median(--emit=pdg)
    sched+mem = median(--emit=memplan)  - median(--emit=pdg)
i.e. the time of the stages after the checked front half (start-up and front end cancel
out).  A benchmark, not a test: it fails only when trlc fails.

usage: tools/bench/schedule_time.py [--trlc build/compiler/trlc] [--repeat 5] [-D N=V]... [FILES...]

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
TARGET_MS = 1000.0


def median_ms(cmd, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: trlc failed (exit {p.returncode}):\n{p.stderr.decode()}")
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("-D", dest="defines", action="append", default=[], help="bound override, passed to trlc")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or (sorted(glob.glob(os.path.join(ROOT, "samples", "*.trl"))) +
                          sorted(glob.glob(os.path.join(ROOT, "tools", "bench", "programs", "*.trl"))))
    extra = [x for d in args.defines for x in ("-D", d)]
    print(f"{'sample':36} {'pdg ms':>8} {'schedule ms':>12} {'sched+mem ms':>13}  target < {TARGET_MS:.0f} ms")
    worst = 0.0
    for f in files:
        base = [args.trlc, f] + extra
        pdg = median_ms(base + ["--emit=pdg"], args.repeat)
        sched = median_ms(base + ["--emit=schedule"], args.repeat) - pdg
        mem = median_ms(base + ["--emit=memplan"], args.repeat) - pdg
        worst = max(worst, sched, mem)
        ok = "ok" if max(sched, mem) < TARGET_MS else "SLOW"
        print(f"{os.path.relpath(f, ROOT):36} {pdg:8.1f} {sched:12.1f} {mem:13.1f}  {ok}")
    print(f"worst schedule + memory-plan time: {worst:.1f} ms")


if __name__ == "__main__":
    main()
