#!/usr/bin/env python3
"""dqn_vs_peer.py — samples/dqn_cartpole.trl against its JAX peer, side by side on one core.

Both arms train CleanRL's DQN on CartPole-v1 with the same hyperparameters
(samples/dqn_cartpole.trl; 500,000 env steps by default, CleanRL's total_timesteps):

  trlc  the host build of samples/dqn_cartpole.trl (trlc --target=host -D T=STEPS), run with
        --threads 1; its compile (front end to executable) is timed apart
  jax   peers/dqn_cartpole_jax.py: the whole training under one jax.jit (PureJaxRL-shaped,
        inline float32 CartPole, the update and the target copy as lax.cond inside one
        lax.scan over the steps), XLA on 1 CPU thread, compiled ahead of time

The arms run one after another, pinned to the same core (sched_setaffinity, inherited by the
children; OMP/OpenBLAS/MKL limited to 1 thread), as tools/bench/ppo_vs_peer.py runs PPO's.
Per arm: training time (wall, and CPU = user + system), env steps per second, CPU time relative
to trlc's (> 1: trlc is faster), compile time, peak resident memory, episodes, the last-100 mean
return and the first env step where the 100-episode mean reached 475.  One seed's learning
statistics are not a speed claim: the arms draw different random numbers.

    python3 tools/bench/dqn_vs_peer.py                      # 500,000 steps, both arms
    python3 tools/bench/dqn_vs_peer.py --steps 100000 --arms trlc,jax --core 0
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ppo_vs_peer  # noqa: E402  (run_trlc, run_measured, tail, missing)
import train_cartpole  # noqa: E402  (find_trlc, read_log, summarize)

ARMS = ["trlc", "jax"]


def run_trlc(a, work, env):
    return ppo_vs_peer.run_trlc(a, work, env, "dqn_cartpole", ["-D", f"T={a.steps}"])


def run_jax(a, work, env):
    gone = ppo_vs_peer.missing("jax", "optax")
    if gone:
        return None, f"{' and '.join(gone)} not installed; for benchmarks only: pip install jax optax"
    log = os.path.join(work, "jax.jsonl")
    err = os.path.join(work, "jax.err")
    rc, _, ru, out = ppo_vs_peer.run_measured(
        [sys.executable, os.path.join(HERE, "peers", "dqn_cartpole_jax.py"), "--steps", str(a.steps),
         "--seed", str(a.seed), "--log", log], work, env, err)
    if rc != 0:
        return None, f"exit {rc}: {ppo_vs_peer.tail(err)}"
    s = json.loads(out.strip().splitlines()[-1])
    return dict(train_seconds=s["train_seconds"], train_cpu_seconds=s["train_cpu_seconds"],
                compile_seconds=s["compile_seconds"], max_rss_mb=ru.ru_maxrss / 1024, log=log), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=500000, help="env steps (> 10,000, learning_starts)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trlc", help="the compiler (default: build/compiler/trlc, else build*/, else PATH)")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated subset of {ARMS}")
    ap.add_argument("--core", type=int, default=None,
                    help="the CPU both arms are pinned to (default: the last one allowed)")
    ap.add_argument("--workdir", default=None, help="where binaries and logs go (default: temp)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    a = ap.parse_args()
    if a.steps <= 10000:
        sys.exit("dqn_vs_peer.py: --steps must exceed learning_starts = 10,000")
    names = [n.strip() for n in a.arms.split(",") if n.strip()]
    bad = [n for n in names if n not in ARMS]
    if bad:
        sys.exit(f"unknown arm(s) {bad}; choose from {ARMS}")
    core = a.core if a.core is not None else max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    work = a.workdir or tempfile.mkdtemp(prefix="dqn_vs_peer.")
    os.makedirs(work, exist_ok=True)
    load_before = os.getloadavg()
    arms, skipped = {}, {}
    for name in names:
        r, why = (run_trlc if name == "trlc" else run_jax)(a, work, env)
        if r is None:
            skipped[name] = why
            print(f"{name}: skipped: {why}", file=sys.stderr)
        else:
            arms[name] = r
    load_after = os.getloadavg()
    for arm in arms.values():
        episodes, _ = train_cartpole.read_log(arm["log"])
        last, first = train_cartpole.summarize(episodes, 475.0)
        arm.update(env_steps=a.steps, episodes=len(episodes), last100=last, first475=first,
                   sps_wall=a.steps / arm["train_seconds"], sps_cpu=a.steps / arm["train_cpu_seconds"])
    t = arms.get("trlc")
    for arm in arms.values():
        arm["cpu_vs_trlc"] = arm["train_cpu_seconds"] / t["train_cpu_seconds"] if t else None
        arm["wall_vs_trlc"] = arm["train_seconds"] / t["train_seconds"] if t else None
    if a.json:
        print(json.dumps(dict(arms=arms, skipped=skipped, steps=a.steps, seed=a.seed, core=core,
                              load_before=load_before, load_after=load_after)))
        return 0 if arms else 1
    print(f"DQN CartPole-v1, {a.steps:,} env steps, seed {a.seed}, every arm on core {core}, 1 thread")
    print(f"load average (1, 5, 15 min) on {os.cpu_count()} cores: before "
          f"{', '.join(f'{x:.2f}' for x in load_before)}; after {', '.join(f'{x:.2f}' for x in load_after)}")
    if t:
        print(f"trlc: {t['trlc']}")
    print(f"{'arm':<6}{'wall s':>8}{'CPU s':>8}{'steps/s':>10}{'CPU/trlc':>9}{'wall/trlc':>10}"
          f"{'compile s':>10}{'RSS MB':>8}{'episodes':>9}{'last-100':>9}{'step to 475':>12}")
    for name, r in arms.items():
        ratio = lambda x: f"{x:.2f}x" if x is not None else "n/a"  # noqa: E731
        last = f"{r['last100']:.1f}" if r["last100"] is not None else "n/a"
        first = f"{r['first475']:,}" if r["first475"] is not None else "never"
        print(f"{name:<6}{r['train_seconds']:>8.1f}{r['train_cpu_seconds']:>8.1f}{r['sps_wall']:>10,.0f}"
              f"{ratio(r['cpu_vs_trlc']):>9}{ratio(r['wall_vs_trlc']):>10}{r['compile_seconds']:>10.1f}"
              f"{r['max_rss_mb']:>8.0f}{r['episodes']:>9}{last:>9}{first:>12}")
    for name, why in skipped.items():
        print(f"{name:<6}skipped: {why}")
    print("CPU/trlc, wall/trlc: the arm's training time over trlc's (above 1: trlc is faster).")
    return 0 if arms else 1


if __name__ == "__main__":
    sys.exit(main())
