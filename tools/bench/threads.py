#!/usr/bin/env python3
"""threads.py — `--threads N` against `--threads 1` of a generated program (issue 13 point 5).

Builds a sample (default samples/ppo_cartpole.trl, full budget) once for the host, then runs it
alternately with `--threads 1` and `--threads N` (default 2; no pinning: the threads need their
own cores), RUNS times each, and prints each setting's wall seconds (sorted), their medians and
the ratio.  Every run's emit records must be the same bytes (the row split and the split
products keep every bit, codegen/row_split.h): a difference is reported and the exit code is 1.

The host's thread team splits only while an empty split's round trip is short (runtime
trl_rt_host.cpp, max_round_trip_us, measured every ~50 ms); each run's measurement is not
printed by the program, so this script also times a run with TRL_SPLIT_MAX_ROUND_TRIP_US=1e9
(always split) and =0 (never), which brackets what the machine's cores allow at the moment.

    python3 tools/bench/threads.py [--trlc build/compiler/trlc] [--sample S] [--threads 2]
        [--runs 5] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_trlc():
    for c in (os.path.join(ROOT, "build", "compiler", "trlc"),):
        if os.access(c, os.X_OK):
            return c
    return "trlc"


def run(exe, threads, log, extra_env=None):
    env = dict(os.environ)
    env.update(extra_env or {})
    t0 = time.perf_counter()
    r = subprocess.run([exe, "--threads", str(threads), "--quiet", "--log", log], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{exe} --threads {threads} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    with open(log, "rb") as f:
        return dt, f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trlc", default=find_trlc())
    ap.add_argument("--sample", default=os.path.join(ROOT, "samples", "ppo_cartpole.trl"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.threads < 2 or a.runs < 1:
        ap.error("--threads must be at least 2 and --runs at least 1")
    with tempfile.TemporaryDirectory() as work:
        exe = os.path.join(work, "prog")
        b = subprocess.run([a.trlc, a.sample, "-o", exe, "--target=host"], stderr=subprocess.PIPE, text=True)
        if b.returncode != 0:
            sys.exit(f"threads.py: building {a.sample} failed:\n{b.stderr}")
        log = os.path.join(work, "log.jsonl")
        times = {1: [], a.threads: []}
        reference, mismatches = None, 0
        for _ in range(a.runs):
            for t in (1, a.threads):
                dt, out = run(exe, t, log)
                times[t].append(dt)
                if reference is None:
                    reference = out
                elif out != reference:
                    mismatches += 1
        always, out_a = run(exe, a.threads, log, {"TRL_SPLIT_MAX_ROUND_TRIP_US": "1e9"})
        never, out_n = run(exe, a.threads, log, {"TRL_SPLIT_MAX_ROUND_TRIP_US": "0"})
        mismatches += (out_a != reference) + (out_n != reference)
    med1, medn = statistics.median(times[1]), statistics.median(times[a.threads])
    result = {
        "sample": os.path.relpath(a.sample, ROOT), "threads": a.threads, "runs": a.runs,
        "seconds_1": sorted(times[1]), f"seconds_{a.threads}": sorted(times[a.threads]),
        "median_1": med1, f"median_{a.threads}": medn, "speedup": med1 / medn,
        "always_split_seconds": always, "never_split_seconds": never,
        "same_bytes": mismatches == 0,
    }
    if a.json:
        print(json.dumps(result))
    else:
        print(f"{result['sample']}: --threads 1 against --threads {a.threads}, {a.runs} runs each (wall s)")
        print(f"  --threads 1: {' '.join(f'{x:.3f}' for x in sorted(times[1]))}  median {med1:.3f}")
        print(f"  --threads {a.threads}: {' '.join(f'{x:.3f}' for x in sorted(times[a.threads]))}  median {medn:.3f}")
        print(f"  speed-up {med1 / medn:.2f}x; one run each with splits forced on {always:.3f} s, off {never:.3f} s")
        print(f"  output bytes: {'the same in every run' if mismatches == 0 else f'{mismatches} run(s) DIFFER'}")
    sys.exit(0 if mismatches == 0 else 1)


if __name__ == "__main__":
    main()
