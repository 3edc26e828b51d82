#!/usr/bin/env python3
"""ppo_vs_peer.py — samples/ppo_cartpole.trl against its peer, run side by side.

The peer is CleanRL's ppo.py in PyTorch eager on the CPU (tools/bench/peers/
ppo_cartpole_torch.py: same hyperparameters, gymnasium's CartPole-v1, same-step autoreset).
Both arms train for the same number of iterations (4 envs × 128 steps each; 976 = CleanRL's
500k steps) with the same number of threads, one after the other in this process, so they see
the same machine (perf_anchors.md §9: report ratios of arms run side by side, not absolute
times from elsewhere).  trlc's compile time is reported apart from its run.

Per arm: env steps, wall time of the training, CPU time of the training (user + system, all
threads: the steadier number on a loaded machine), steps per CPU second, peak resident memory,
episodes, last-100 mean return and the first env step where the 100-episode mean reached 475.
Then the ratios peer / trlc.  Learning statistics of one seed are not a speed claim: the two
arms use different random streams (Philox vs PyTorch's), so compare them over seeds.

    python3 tools/bench/ppo_vs_peer.py                       # 976 iterations, 1 thread
    python3 tools/bench/ppo_vs_peer.py --iterations 50 --threads 2
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import train_cartpole  # noqa: E402  (find_trlc, read_log, summarize)


def run_measured(cmd, cwd):
    """(exit code, wall seconds, rusage of the child alone, stdout text)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.time() - t0, usage, out


def learning(log):
    episodes, _ = train_cartpole.read_log(log)
    last, first = train_cartpole.summarize(episodes, 475.0)
    return len(episodes), last, first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=976)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trlc", help="the compiler (default: build*/compiler/trlc, else PATH)")
    ap.add_argument("--workdir", default=None, help="where binaries and logs go (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="ppo_vs_peer.")
    os.makedirs(work, exist_ok=True)
    trlc = train_cartpole.find_trlc(a.trlc)
    if not trlc:
        sys.exit("trlc not found: build it or pass --trlc")

    exe = os.path.join(work, "ppo_cartpole")
    t0 = time.time()
    build = subprocess.run([trlc, os.path.join(ROOT, "samples", "ppo_cartpole.trl"),
                            "--target=host", "-o", exe, "-D", f"I={a.iterations}"])
    compile_s = time.time() - t0
    if build.returncode != 0:
        sys.exit("trlc build failed")
    arms = {}
    log = os.path.join(work, "trlc.jsonl")
    rc, wall, ru, _ = run_measured([exe, "--seed", str(a.seed), "--threads", str(a.threads),
                                    "--quiet", "--log", log], work)
    if rc != 0:
        sys.exit(f"trlc run failed (exit {rc})")
    arms["trlc"] = dict(train_seconds=wall, train_cpu_seconds=ru.ru_utime + ru.ru_stime,
                        max_rss_mb=ru.ru_maxrss / 1024, log=log)
    log = os.path.join(work, "torch.jsonl")
    rc, wall, ru, out = run_measured(
        [sys.executable, os.path.join(HERE, "peers", "ppo_cartpole_torch.py"), "--iterations",
         str(a.iterations), "--seed", str(a.seed), "--threads", str(a.threads), "--log", log], work)
    if rc != 0:
        sys.exit(f"peer run failed (exit {rc})")
    summary = json.loads(out.strip().splitlines()[-1])
    arms["pytorch-eager"] = dict(train_seconds=summary["train_seconds"],
                                 train_cpu_seconds=summary["train_cpu_seconds"],
                                 max_rss_mb=ru.ru_maxrss / 1024, log=log)
    steps = a.iterations * 512
    for arm in arms.values():
        n, last, first = learning(arm["log"])
        arm.update(env_steps=steps, episodes=n, last100=last, first475=first,
                   sps_wall=steps / arm["train_seconds"], sps_cpu=steps / arm["train_cpu_seconds"])
    t, p = arms["trlc"], arms["pytorch-eager"]
    ratios = dict(wall=p["train_seconds"] / t["train_seconds"],
                  cpu=p["train_cpu_seconds"] / t["train_cpu_seconds"],
                  rss=p["max_rss_mb"] / t["max_rss_mb"])
    load = os.getloadavg()[1]
    if a.json:
        print(json.dumps(dict(arms=arms, ratios=ratios, trlc_compile_seconds=compile_s,
                              threads=a.threads, load5=load)))
        return 0
    print(f"PPO CartPole-v1, {a.iterations} iterations ({steps:,} env steps), {a.threads} thread(s), "
          f"seed {a.seed}; load average {load:.2f} on {os.cpu_count()} cores")
    print(f"trlc compile (front end to executable): {compile_s:.1f} s wall")
    print(f"{'arm':<15}{'wall s':>9}{'CPU s':>9}{'steps/CPU s':>13}{'RSS MB':>9}{'episodes':>10}"
          f"{'last-100':>10}{'step to 475':>13}")
    for name, r in arms.items():
        last = f"{r['last100']:.1f}" if r["last100"] is not None else "n/a"
        first = str(r["first475"]) if r["first475"] is not None else "never"
        print(f"{name:<15}{r['train_seconds']:>9.1f}{r['train_cpu_seconds']:>9.1f}"
              f"{r['sps_cpu']:>13,.0f}{r['max_rss_mb']:>9.1f}{r['episodes']:>10}{last:>10}{first:>13}")
    print(f"peer / trlc: wall {ratios['wall']:.2f}x, CPU {ratios['cpu']:.2f}x, "
          f"resident memory {ratios['rss']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
