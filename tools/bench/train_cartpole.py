#!/usr/bin/env python3
"""train_cartpole.py — a full training run of a CartPole sample, measured.

Compiles samples/<name>.trl with trlc into a host executable (unless --from-log), runs it with a
fixed seed, reads its JSON Lines log and prints:

    env steps       the steps simulated over all environments (the last "train" line's
                    env_steps, else the last episode's step)
    wall time       of the run (not of the compile), and the load average while it ran
    CPU time        of the run (user + system, all threads) and its peak resident memory
    episodes        finished episodes
    first-100 mean  mean return of the first 100 finished episodes (what learning starts from)
    last-100 mean   mean return of the last 100 finished episodes
    first >= X      the env step of the episode at which the mean of the 100 episodes ending
                    there first reached the threshold (X = --require, default 475)

Episode lines are the records with an "episodic_return" key (and "step", the env steps over all
environments when the episode finished), as samples/{reinforce,nstep,ppo}_cartpole.trl write
them; other records are ignored except "train" lines' env_steps (tools/trl_metrics.py reads
the log, as it does for tools/plot_learning_curve.py).  Exit status: 0, or with
--require X, 0 iff the last-100 mean is >= X (1 otherwise, 2 when the build or run failed).

    python3 tools/bench/train_cartpole.py reinforce_cartpole --require 475
    python3 tools/bench/train_cartpole.py nstep_cartpole -D I=500 --threads 1
    python3 tools/bench/train_cartpole.py --from-log run.jsonl --require 150   # no build, no run
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import trl_metrics  # noqa: E402  (tools/trl_metrics.py: the JSON Lines reader)


def find_trlc(explicit):
    if explicit:
        return explicit
    for d in sorted(os.listdir(ROOT)):
        p = os.path.join(ROOT, d, "compiler", "trlc")
        if d.startswith("build") and os.access(p, os.X_OK):
            return p
    return shutil.which("trlc")


def read_log(path):
    """(episodes as [(step, return)], env_steps) from a JSON Lines log (tools/trl_metrics.py)."""
    m = trl_metrics.read(path)
    return [(0 if s is None else s, r) for s, r in m.episodes], m.env_steps


def summarize(episodes, threshold, window=100):
    """(last-window mean or None, env step where the window mean first reached threshold)."""
    rets = [r for _, r in episodes]
    last = sum(rets[-window:]) / window if len(rets) >= window else None
    first = None
    s = sum(rets[:window])
    for k in range(window - 1, len(rets)):
        if k >= window:
            s += rets[k] - rets[k - window]
        if s / window >= threshold:
            first = episodes[k][0]
            break
    return last, first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sample", nargs="?", help="sample name (samples/NAME.trl) or a .trl path")
    ap.add_argument("--from-log", metavar="LOG", help="only read an existing log")
    ap.add_argument("--trlc", help="the compiler (default: build*/compiler/trlc, else PATH)")
    ap.add_argument("-D", action="append", default=[], metavar="NAME=V", help="bound override")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="--threads of the run (the runtime's thread team)")
    ap.add_argument("--workdir", default=None, help="where the binary and log go")
    ap.add_argument("--require", type=float, default=None, metavar="X",
                    help="exit 0 iff the last-100 mean return is >= X")
    ap.add_argument("--window", type=int, default=100)
    a = ap.parse_args()
    threshold = a.require if a.require is not None else 475.0

    wall = load = usage = None
    if a.from_log:
        log = a.from_log
    else:
        if not a.sample:
            ap.error("give a sample name or --from-log")
        src = a.sample if a.sample.endswith(".trl") else os.path.join(ROOT, "samples", a.sample + ".trl")
        name = os.path.splitext(os.path.basename(src))[0]
        work = a.workdir or os.path.join(ROOT, "build-bench", name)
        os.makedirs(work, exist_ok=True)
        exe, log = os.path.join(work, name), os.path.join(work, name + ".jsonl")
        trlc = find_trlc(a.trlc)
        if not trlc:
            sys.exit("trlc not found: build it or pass --trlc")
        cmd = [trlc, src, "--target=host", "-o", exe] + [f"-D{d}" for d in a.D]
        t0 = time.time()
        if subprocess.run(cmd).returncode != 0:
            print("build failed: " + " ".join(cmd), file=sys.stderr)
            return 2
        print(f"compiled {name} in {time.time() - t0:.1f} s", flush=True)
        t0 = time.time()
        r = subprocess.Popen([exe, "--seed", str(a.seed), "--threads", str(a.threads), "--log", log],
                             cwd=work)
        _, status, usage = os.wait4(r.pid, 0)  # the run's own rusage (not the compile's)
        r.returncode = os.waitstatus_to_exitcode(status)
        wall = time.time() - t0
        load = os.getloadavg()[1]
        if r.returncode != 0:
            print(f"run failed (exit {r.returncode})", file=sys.stderr)
            return 2

    episodes, steps = read_log(log)
    last, first = summarize(episodes, threshold, a.window)
    print(f"log: {log}")
    print(f"env steps: {steps}")
    if wall is not None:
        print(f"wall time: {wall:.1f} s (load average over 5 min: {load:.2f} on {os.cpu_count()} cores)")
        print(f"CPU time: {usage.ru_utime + usage.ru_stime:.1f} s (user {usage.ru_utime:.1f} s, "
              f"system {usage.ru_stime:.1f} s), peak resident memory: {usage.ru_maxrss / 1024:.1f} MB")
    print(f"episodes: {len(episodes)}")
    if len(episodes) >= a.window:
        print(f"first-{a.window} mean return: {sum(r for _, r in episodes[:a.window]) / a.window:.2f}")
    print(f"last-{a.window} mean return: " + (f"{last:.2f}" if last is not None else "n/a (too few episodes)"))
    print(f"first env step with a {a.window}-episode mean >= {threshold:g}: "
          + (str(first) if first is not None else "never"))
    if a.require is not None:
        ok = last is not None and last >= a.require
        print(("PASS" if ok else "FAIL") + f": last-{a.window} mean {'>=' if ok else '<'} {a.require:g}")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
