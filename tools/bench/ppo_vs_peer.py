#!/usr/bin/env python3
"""ppo_vs_peer.py — samples/ppo_cartpole.trl against its peers, side by side on one core.

Every arm trains CleanRL's PPO on CartPole-v1 with the same hyperparameters (E = 4 envs ×
T = 128 steps per iteration, 4 epochs × 4 minibatches of 128, separate 4-64-64 tanh actor and
critic, Adam 2.5e-4 annealed to 0, ...; samples/ppo_cartpole.trl) for the same number of
iterations, 977 by default (500,224 env steps, CleanRL's budget):

  trlc           the host build of samples/ppo_cartpole.trl (trlc --target=host -D I=N), run
                 with --threads 1; its compile (front end to executable) is timed apart
  jax            peers/ppo_cartpole_jax.py: the whole training under one jax.jit (PureJaxRL-
                 shaped, inline float32 CartPole), XLA on 1 CPU thread, compiled ahead of time
  torch-compile  peers/ppo_cartpole_torch.py --compile: the minibatch update under
                 torch.compile, the rollout eager with gymnasium's CartPole-v1
  torch-eager    peers/ppo_cartpole_torch.py: CleanRL's ppo.py in PyTorch eager

The arms run one after another from this one invocation, every one pinned to the same core
(sched_setaffinity, inherited by the children; OMP/OpenBLAS/MKL limited to 1 thread), so they
see the same machine (report ratios of arms run side by side, not absolute
times from elsewhere).  fma_peak.cpp, built here with -O3 -march=native, measures that core's
float32 FMA throughput before and after the arms; the better of the two is the peak.

Per arm: training time (wall, and CPU = user + system of all threads: the steadier number on
a loaded machine), env steps per second (wall) and per CPU second, CPU time relative to trlc's
(> 1: trlc is faster), the share of the FMA peak (PPO_FLOPS_PER_STEP × env steps per CPU
second / peak), compile time (wall; cold: Inductor's cache is off, JAX keeps none by default),
peak resident memory, episodes, last-100 mean return and the first env step where the
100-episode mean reached 475.  Learning statistics of one seed are
not a speed claim: the arms draw different random numbers; they show each arm learns.

The JAX arm needs `pip install jax optax` (benchmarks only, not in tools/setup.sh); torch
arms need torch and gymnasium (tools/setup.sh), torch-compile also a C++ compiler.  An arm
whose packages or compiler are missing is skipped with a message; --arms picks a subset.

    python3 tools/bench/ppo_vs_peer.py                          # all arms, 977 iterations
    python3 tools/bench/ppo_vs_peer.py --iterations 50 --arms trlc,jax --core 0
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import train_cartpole  # noqa: E402  (find_trlc, read_log, summarize)

ARMS = ["trlc", "jax", "torch-compile", "torch-eager"]
E, T, EPOCHS = 4, 128, 4
N = E * T                                   # env steps per iteration

# Useful FLOPs of one PPO env step, counting the matrix products only (2 FLOPs per
# multiply-add, the work FMA units do); bias adds, tanh, softmax, the losses and Adam
# (9,155 parameters × 16 updates per 512 steps) are elementwise and left out (a few %).
# A dense layer x[in] @ W[in, out] is 2·in·out FLOPs per sample forward; backward it is
# 2·in·out for dW = xᵀ·dy and 2·in·out for dx = dy·Wᵀ, except dx of the first layer (its
# input is the observation, which needs no gradient).
#   forward per sample: actor 4-64-64-2: 2·(4·64 + 64·64 + 64·2) = 8,960
#                       critic 4-64-64-1: 2·(4·64 + 64·64 + 64·1) = 8,832   → F = 17,792
#   backward per sample: dW 8,960 + 8,832, dx 2·(64·64 + 64·2) + 2·(64·64 + 64·1)
#                        = 17,792 + 16,768                                  → B = 34,560
#   per iteration: the rollout runs both nets on E·T = 512 observations (512·F), the
#   bootstrap runs the critic on E = 4 (4·8,832), and the update sees each of the 512
#   samples once per epoch, forward and backward through both nets (4·512·(F + B)):
#   9,109,504 + 35,328 + 107,216,896 = 116,361,728 FLOPs / 512 steps ≈ 0.227 MFLOP per step.
# (The trlc sample also recomputes the last minibatch's statistics for its log; that and the
# arms' other overheads are not useful work and do not count.)


def _dense(sizes):
    """(forward, backward) FLOPs per sample of an MLP with these layer sizes."""
    layers = list(zip(sizes[:-1], sizes[1:]))
    fwd = sum(2 * i * o for i, o in layers)
    bwd = fwd + sum(2 * i * o for i, o in layers[1:])
    return fwd, bwd


def ppo_flops_per_step():
    fa, ba = _dense([4, 64, 64, 2])
    fc, bc = _dense([4, 64, 64, 1])
    per_iteration = N * (fa + fc) + E * fc + EPOCHS * N * (fa + fc + ba + bc)
    return per_iteration / N


PPO_FLOPS_PER_STEP = ppo_flops_per_step()


def run_measured(cmd, cwd, env, err_path):
    """(exit code, wall seconds, rusage of the child alone, stdout text); stderr to err_path."""
    t0 = time.time()
    with open(err_path, "w") as err:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), time.time() - t0, usage, out


def tail(path, n=5):
    with open(path) as f:
        return "".join(f.readlines()[-n:]).rstrip()


def fma_peak(work, env):
    """fma_peak.cpp's JSON, built with -O3 -march=native, or None (and why) if it cannot be."""
    exe = os.path.join(work, "fma_peak")
    if not os.path.exists(exe):
        cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
        if not cxx:
            return None, "no C++ compiler"
        r = subprocess.run([cxx, "-O3", "-march=native", "-o", exe,
                            os.path.join(HERE, "fma_peak.cpp")], capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip().splitlines()[-1:]
    r = subprocess.run([exe], capture_output=True, text=True, env=env)
    return (json.loads(r.stdout), None) if r.returncode == 0 else (None, r.stderr.strip())


def missing(*modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def run_trlc(a, work, env, sample="ppo_cartpole", defines=None):
    """The trlc arm: samples/SAMPLE.trl built for the host with "defines" (default -D I=
    --iterations; dqn_vs_peer.py passes its own sample and -D T=), its compile timed apart, run
    with --threads 1."""
    trlc = a.trlc or (os.path.join(ROOT, "build", "compiler", "trlc")
                      if os.access(os.path.join(ROOT, "build", "compiler", "trlc"), os.X_OK)
                      else train_cartpole.find_trlc(None))
    if not trlc:
        return None, "trlc not found: build it or pass --trlc"
    exe = os.path.join(work, sample)
    t0 = time.time()
    build = subprocess.run([trlc, os.path.join(ROOT, "samples", sample + ".trl"), "--target=host", "-o", exe] +
                           (defines if defines is not None else ["-D", f"I={a.iterations}"]), env=env)
    compile_s = time.time() - t0
    if build.returncode != 0:
        return None, f"{trlc} failed to build samples/{sample}.trl"
    log = os.path.join(work, "trlc.jsonl")
    rc, wall, ru, _ = run_measured([exe, "--seed", str(a.seed), "--threads", "1", "--quiet",
                                    "--log", log], work, env, os.path.join(work, "trlc.err"))
    if rc != 0:
        why = tail(os.path.join(work, "trlc.err"))
        return None, f"the trlc build's run failed (exit {rc}): {why}"
    return dict(train_seconds=wall, train_cpu_seconds=ru.ru_utime + ru.ru_stime,
                compile_seconds=compile_s, max_rss_mb=ru.ru_maxrss / 1024, log=log,
                trlc=trlc), None


def run_peer(name, script, extra, a, work, env):
    """A peer script that prints a JSON summary as its last stdout line (exit 3: skip)."""
    log = os.path.join(work, f"{name}.jsonl")
    err = os.path.join(work, f"{name}.err")
    rc, _, ru, out = run_measured([sys.executable, os.path.join(HERE, "peers", script),
                                   "--iterations", str(a.iterations), "--seed", str(a.seed),
                                   "--log", log] + extra, work, env, err)
    if rc != 0:
        return None, f"exit {rc}: {tail(err)}"
    s = json.loads(out.strip().splitlines()[-1])
    return dict(train_seconds=s["train_seconds"], train_cpu_seconds=s["train_cpu_seconds"],
                compile_seconds=s.get("compile_seconds", 0.0), max_rss_mb=ru.ru_maxrss / 1024,
                log=log), None


def run_arm(name, a, work, env):
    """(result dict, None) or (None, why the arm was skipped)."""
    if name == "trlc":
        return run_trlc(a, work, env)
    if name == "jax":
        gone = missing("jax", "optax")
        if gone:
            return None, (f"{' and '.join(gone)} not installed; for benchmarks only: "
                          "pip install jax optax")
        return run_peer(name, "ppo_cartpole_jax.py", [], a, work, env)
    gone = missing("torch", "gymnasium")
    if gone:
        return None, f"{' and '.join(gone)} not installed (tools/setup.sh installs them)"
    if name == "torch-compile":
        if not (os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")):
            return None, "torch.compile (Inductor) needs a C++ compiler; none found"
        # A cold compile, as the other arms' (Inductor's on-disk cache off).
        return run_peer(name, "ppo_cartpole_torch.py", ["--threads", "1", "--compile"], a, work,
                        dict(env, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1"))
    return run_peer(name, "ppo_cartpole_torch.py", ["--threads", "1"], a, work, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=977, help="977 × 512 = 500,224 env steps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trlc", help="the compiler (default: build/compiler/trlc, else build*/, "
                                   "else PATH)")
    ap.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated subset of {ARMS}")
    ap.add_argument("--core", type=int, default=None,
                    help="the CPU every arm is pinned to (default: the last one allowed)")
    ap.add_argument("--workdir", default=None, help="where binaries and logs go (default: temp)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    a = ap.parse_args()
    names = [n.strip() for n in a.arms.split(",") if n.strip()]
    bad = [n for n in names if n not in ARMS]
    if bad:
        sys.exit(f"unknown arm(s) {bad}; choose from {ARMS}")
    core = a.core if a.core is not None else max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    work = a.workdir or tempfile.mkdtemp(prefix="ppo_vs_peer.")
    os.makedirs(work, exist_ok=True)
    load_before = os.getloadavg()

    peak_before, why = fma_peak(work, env)
    if why:
        print(f"fma_peak: {why}; no peak shares", file=sys.stderr)
    arms, skipped = {}, {}
    for name in names:
        r, why = run_arm(name, a, work, env)
        if r is None:
            skipped[name] = why
            print(f"{name}: skipped: {why}", file=sys.stderr)
        else:
            arms[name] = r
    peak_after, _ = fma_peak(work, env) if peak_before else (None, None)
    load_after = os.getloadavg()
    peak = max(p["peak_gflops"] for p in (peak_before, peak_after) if p) if peak_before else None

    steps = a.iterations * N
    for arm in arms.values():
        episodes, _ = train_cartpole.read_log(arm["log"])
        last, first = train_cartpole.summarize(episodes, 475.0)
        arm.update(env_steps=steps, episodes=len(episodes), last100=last, first475=first,
                   sps_wall=steps / arm["train_seconds"], sps_cpu=steps / arm["train_cpu_seconds"])
        arm["fma_share_cpu"] = (PPO_FLOPS_PER_STEP * arm["sps_cpu"] / (peak * 1e9)
                                if peak else None)
    t = arms.get("trlc")
    for arm in arms.values():
        arm["cpu_vs_trlc"] = arm["train_cpu_seconds"] / t["train_cpu_seconds"] if t else None
        arm["wall_vs_trlc"] = arm["train_seconds"] / t["train_seconds"] if t else None
    if a.json:
        print(json.dumps(dict(arms=arms, skipped=skipped, iterations=a.iterations,
                              env_steps=steps, seed=a.seed, core=core,
                              flops_per_step=PPO_FLOPS_PER_STEP, fma_peak_gflops=peak,
                              fma_before=peak_before, fma_after=peak_after,
                              load_before=load_before, load_after=load_after)))
        return 0 if arms else 1

    print(f"PPO CartPole-v1, {a.iterations} iterations ({steps:,} env steps), seed {a.seed}, "
          f"every arm on core {core}, 1 thread")
    print(f"load average (1, 5, 15 min) on {os.cpu_count()} cores: before "
          f"{', '.join(f'{x:.2f}' for x in load_before)}; after "
          f"{', '.join(f'{x:.2f}' for x in load_after)}")
    if peak:
        widths = lambda p: ", ".join(f"{w}-bit {g:.1f}" for w, g in p["widths"].items())  # noqa
        print(f"FMA peak of core {core}: {peak:.1f} GFLOP/s f32 (before: {widths(peak_before)}; "
              f"after: {widths(peak_after) if peak_after else 'n/a'}); PPO useful work "
              f"{PPO_FLOPS_PER_STEP / 1e6:.3f} MFLOP per env step (matrix products)")
    if "trlc" in arms:
        print(f"trlc: {arms['trlc']['trlc']}")
    hdr = (f"{'arm':<14}{'wall s':>8}{'CPU s':>8}{'steps/s':>10}{'steps/CPU s':>12}"
           f"{'CPU/trlc':>9}{'wall/trlc':>10}{'FMA peak':>9}{'compile s':>10}{'RSS MB':>8}"
           f"{'episodes':>9}{'last-100':>9}{'step to 475':>12}")
    print(hdr)
    for name, r in arms.items():
        ratio = lambda x: f"{x:.2f}x" if x is not None else "n/a"  # noqa: E731
        share = f"{100 * r['fma_share_cpu']:.2f}%" if r["fma_share_cpu"] is not None else "n/a"
        last = f"{r['last100']:.1f}" if r["last100"] is not None else "n/a"
        first = f"{r['first475']:,}" if r["first475"] is not None else "never"
        print(f"{name:<14}{r['train_seconds']:>8.1f}{r['train_cpu_seconds']:>8.1f}"
              f"{r['sps_wall']:>10,.0f}{r['sps_cpu']:>12,.0f}{ratio(r['cpu_vs_trlc']):>9}"
              f"{ratio(r['wall_vs_trlc']):>10}{share:>9}{r['compile_seconds']:>10.1f}"
              f"{r['max_rss_mb']:>8.0f}{r['episodes']:>9}{last:>9}{first:>12}")
    for name, why in skipped.items():
        print(f"{name:<14}skipped: {why}")
    print("CPU/trlc, wall/trlc: the arm's training time over trlc's (above 1: trlc is faster). "
          "FMA peak: useful FLOPs per CPU second over the peak.")
    return 0 if arms else 1


if __name__ == "__main__":
    sys.exit(main())
