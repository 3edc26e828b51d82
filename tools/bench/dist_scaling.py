#!/usr/bin/env python3
"""dist_scaling.py — env steps/s of a sample run as 1 and 2 data-parallel ranks (issue 21).

Builds the sample twice (`trlc -o`, and `trlc --distributed=mpi -o`), then runs, interleaved
--repeat times on this machine: the plain program (one process), two plain programs at once
(independent: what two cores give without any communication, the ceiling of 2 ranks), the
distributed one under `mpirun -np 1`, and under `mpirun -np 2` (each rank its own E
environments).  Every rank steps I·E·T environments (the last "train" record's env_steps, which
counts one rank's), so a run of N ranks steps N times that.
Times: "run" is the program's own run time (its exit line `run time: S s`, from the end of
trl_init to trl_finish: without process start-up, mpirun's launch and MPI_Init; of N processes
the longest), "wall" the whole command.  Env steps/s are over the run time.
Prints a table of seconds (median, min) and env steps/s, and the ratio of 2 ranks to 1.

    python3 tools/bench/dist_scaling.py [--sample samples/ppo_cartpole.trl] [--repeat 5]
"""
import argparse
import json
import os
import re
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
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME=V",
                    help="a bound of the sample (trlc -D), e.g. E=16: more environments per rank")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    work = tempfile.mkdtemp(prefix="trlc-dist-")
    plain, dist = os.path.join(work, "plain"), os.path.join(work, "dist")
    for out, extra in ((plain, []), (dist, ["--distributed=mpi"])):
        subprocess.run([a.trlc, a.sample, "--target=host", "-o", out] + [f"-D{d}" for d in a.define] + extra,
                       check=True, env=env)
    mpirun = [a.mpirun, "--oversubscribe", "-np"]
    flags = ["--threads", "1"]
    arms = [("1 process", [[plain]]), ("2 processes (independent)", [[plain], [plain]]),
            ("mpirun -np 1", [mpirun + ["1", dist]]), ("mpirun -np 2", [mpirun + ["2", dist]])]
    wall = {name: [] for name, _ in arms}
    run = {name: [] for name, _ in arms}
    steps = {}
    for rep in range(a.repeat):
        for name, cmds in arms:
            logs = [os.path.join(work, f"log{k}.jsonl") for k in range(len(cmds))]
            t0 = time.monotonic()
            procs = [subprocess.Popen(c + flags + ["--log", log], cwd=work, env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True) for c, log in zip(cmds, logs)]
            errs = [p.communicate()[1] for p in procs]
            wall[name].append(time.monotonic() - t0)
            for p, err in zip(procs, errs):
                if p.returncode != 0:
                    sys.exit(f"dist_scaling: {name} exited {p.returncode}:\n{err}")
            secs = [float(m) for err in errs for m in re.findall(r"run time: ([0-9.]+) s", err)]
            if not secs:
                sys.exit(f"dist_scaling: {name} printed no run time:\n{errs}")
            run[name].append(max(secs))
            ranks = 2 if name.endswith("2") else 1
            steps[name] = sum(env_steps(log) for log in logs) * ranks
        print(f"repeat {rep + 1}/{a.repeat}: " +
              ", ".join(f"{n} {run[n][-1]:.2f} s ({wall[n][-1]:.2f} wall)" for n, _ in arms), file=sys.stderr)
    print(f"{os.path.basename(a.sample)} {' '.join('-D' + d for d in a.define)}, {a.repeat} interleaved repeats, --threads 1 per process, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print("| run | env steps | run s (median, min) | wall s (median, min) | env steps/s (median run) |")
    print("|---|---|---|---|---|")
    rate = {}
    for name, _ in arms:
        med = statistics.median(run[name])
        rate[name] = steps[name] / med
        print(f"| {name} | {steps[name]:,} | {med:.2f}, {min(run[name]):.2f} | "
              f"{statistics.median(wall[name]):.2f}, {min(wall[name]):.2f} | {rate[name]:,.0f} |")
    one = rate["mpirun -np 1"]
    print(f"2 ranks / 1 rank (mpirun -np 1): {rate['mpirun -np 2'] / one:.2f}x; 2 ranks / 1 process: "
          f"{rate['mpirun -np 2'] / rate['1 process']:.2f}x; 2 independent processes / 1 process: "
          f"{rate['2 processes (independent)'] / rate['1 process']:.2f}x (the ceiling on this machine)")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
