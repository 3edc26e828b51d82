#!/usr/bin/env python3
"""dist_scaling.py — env steps/s of a sample run as 1 and 2 data-parallel ranks (issue 21).

Builds the sample twice (`trlc -o`, and `trlc --distributed=mpi -o`), then runs, interleaved
--repeat times on this machine: the plain program (one process), the distributed one under
`mpirun -np 1`, and under `mpirun -np 2` (each rank its own E environments).  Every rank steps
I·E·T environments (the last "train" record's env_steps, which counts one rank's), so a run of N
ranks steps N times that.
Prints a table of wall seconds (median, min) and env steps/s, and the ratio of 2 ranks to 1.

    python3 tools/bench/dist_scaling.py [--sample samples/ppo_cartpole.trl] [--repeat 5]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def env_steps(log):
    last = None
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            if "env_steps" in r:
                last = r["env_steps"]
    return last


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", default=os.path.join(ROOT, "samples", "ppo_cartpole.trl"))
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    work = tempfile.mkdtemp(prefix="trlc-dist-")
    plain, dist = os.path.join(work, "plain"), os.path.join(work, "dist")
    for out, extra in ((plain, []), (dist, ["--distributed=mpi"])):
        subprocess.run([a.trlc, a.sample, "--target=host", "-o", out] + extra, check=True, env=env)
    arms = [("1 process", [plain]), ("mpirun -np 1", [a.mpirun, "--oversubscribe", "-np", "1", dist]),
            ("mpirun -np 2", [a.mpirun, "--oversubscribe", "-np", "2", dist])]
    times = {name: [] for name, _ in arms}
    steps = {}
    for rep in range(a.repeat):
        for name, cmd in arms:
            log = os.path.join(work, "log.jsonl")
            t0 = time.monotonic()
            subprocess.run(cmd + ["--threads", "1", "--quiet", "--log", log], check=True, cwd=work, env=env,
                           stdout=subprocess.DEVNULL)
            times[name].append(time.monotonic() - t0)
            ranks = 2 if name.endswith("2") else 1
            steps[name] = env_steps(log) * ranks
        print(f"repeat {rep + 1}/{a.repeat}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n, _ in arms),
              file=sys.stderr)
    print(f"{os.path.basename(a.sample)}, {a.repeat} interleaved repeats, --threads 1 per rank, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print("| run | env steps | wall s (median, min) | env steps/s (median) |")
    print("|---|---|---|---|")
    rate = {}
    for name, _ in arms:
        med = statistics.median(times[name])
        rate[name] = steps[name] / med
        print(f"| {name} | {steps[name]:,} | {med:.2f}, {min(times[name]):.2f} | {rate[name]:,.0f} |")
    print(f"2 ranks / 1 rank (mpirun -np 1): {rate['mpirun -np 2'] / rate['mpirun -np 1']:.2f}x; "
          f"2 ranks / 1 process: {rate['mpirun -np 2'] / rate['1 process']:.2f}x")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
