#!/usr/bin/env python3
"""decode_vs_peer.py — samples/transformer_decode.trl against a JAX KV-cache decoder, side by side
on one core.

Both arms decode the same model (4 layers, 4 heads, D = 64, V = 128; weights from
tools/gpt_ref.py's fixed seed) greedily from token 0 for --steps tokens:

  trlc  the host build of the sample with -D T=STEPS (its emit keeps the token, drops the 128
        logits: the arms compare decoding, not JSON printing), run with --threads 1; the whole
        process is timed (start, loading the .npz, decoding, exit)
  jax   peers/transformer_decode_jax.py: one jax.jit over a lax.scan of the steps, the cache a
        static [L, H, T, Dh] array under a mask (step t attends over all T slots, twice the work
        of trlc's t + 1 on average), XLA on 1 CPU thread, compiled ahead of time and warmed up;
        one run timed

The arms are pinned to the same core (OMP/OpenBLAS/MKL limited to 1 thread) and must produce the
same tokens.  Useful work counts the products of the causal model (2 FLOPs per multiply-add):
per token 2·(L·(4·D² + 2·D·F) + V·D) plus 2·2·L·D·(t + 1) for attention at step t; the share of
the FMA peak (fma_peak.cpp, as ppo_vs_peer.py measures it) uses CPU seconds.

    python3 tools/bench/decode_vs_peer.py --steps 2048
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
import ppo_vs_peer  # noqa: E402  (run_measured, fma_peak, missing, tail)
import train_cartpole  # noqa: E402  (find_trlc)

SAMPLE = os.path.join(ROOT, "samples", "transformer_decode.trl")
L, H, D, F, V = 4, 4, 64, 256, 128


def useful_flops(steps):
    per_token = 2 * (L * (4 * D * D + 2 * D * F) + V * D)
    attention = 2 * 2 * L * D * sum(t + 1 for t in range(steps))
    return steps * per_token + attention


def run_trlc(a, work, env):
    trlc = a.trlc or (os.path.join(ROOT, "build", "compiler", "trlc")
                      if os.access(os.path.join(ROOT, "build", "compiler", "trlc"), os.X_OK)
                      else train_cartpole.find_trlc(None))
    if not trlc:
        return None, "trlc not found: build it or pass --trlc"
    src = os.path.join(work, "transformer_decode.trl")
    with open(SAMPLE) as f:
        text = f.read()
    emit = 'emit "token"[t] { t: t, token: i32(argmax(logits[t])), logits: logits[t] }'
    if emit not in text:
        return None, "the sample's emit line changed: update decode_vs_peer.py"
    with open(src, "w") as f:
        f.write(text.replace(emit, 'emit "token"[t] { t: t, token: i32(argmax(logits[t])) }'))
    exe = os.path.join(work, "decode")
    t0 = time.time()
    r = subprocess.run([trlc, src, "--target=host", "-o", exe, "-D", f"T={a.steps}"], env=env)
    compile_s = time.time() - t0
    if r.returncode != 0:
        return None, f"trlc exit {r.returncode}"
    rc, wall, ru, out = ppo_vs_peer.run_measured([exe, "--quiet", "--threads", "1"], work, env,
                                                 os.path.join(work, "trlc.err"))
    if rc != 0:
        return None, f"exit {rc}: {ppo_vs_peer.tail(os.path.join(work, 'trlc.err'))}"
    toks = [json.loads(line)["token"] for line in out.splitlines() if line.strip()]
    return dict(seconds=wall, cpu_seconds=ru.ru_utime + ru.ru_stime, compile_seconds=compile_s, tokens=toks,
                max_rss_mb=ru.ru_maxrss / 1024), None


def run_jax(a, work, env):
    gone = ppo_vs_peer.missing("jax")
    if gone:
        return None, "jax not installed; for benchmarks only: pip install jax"
    rc, _, ru, out = ppo_vs_peer.run_measured(
        [sys.executable, os.path.join(HERE, "peers", "transformer_decode_jax.py"), work, "--steps", str(a.steps)],
        work, env, os.path.join(work, "jax.err"))
    if rc != 0:
        return None, f"exit {rc}: {ppo_vs_peer.tail(os.path.join(work, 'jax.err'))}"
    s = json.loads(out.strip().splitlines()[-1])
    return dict(seconds=s["decode_seconds"], cpu_seconds=s["decode_cpu_seconds"],
                compile_seconds=s["compile_seconds"], tokens=s["tokens"], max_rss_mb=ru.ru_maxrss / 1024), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2048, help="tokens to decode (the sample's T)")
    ap.add_argument("--trlc", help="the compiler (default: build/compiler/trlc, else PATH)")
    ap.add_argument("--arms", default="trlc,jax")
    ap.add_argument("--core", type=int, default=None, help="the CPU both arms run on (default: the last)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    core = a.core if a.core is not None else max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    work = a.workdir or tempfile.mkdtemp(prefix="decode_vs_peer.")
    os.makedirs(work, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpt_ref.py"), "make", work], check=True)
    peak, why = ppo_vs_peer.fma_peak(work, env)
    arms, skipped = {}, {}
    for name in [n.strip() for n in a.arms.split(",") if n.strip()]:
        r, why = {"trlc": run_trlc, "jax": run_jax}[name](a, work, env)
        if r is None:
            skipped[name] = why
        else:
            arms[name] = r
    flops = useful_flops(a.steps)
    for r in arms.values():
        r["gflops_cpu"] = flops / r["cpu_seconds"] / 1e9
        r["fma_share"] = r["gflops_cpu"] / peak["peak_gflops"] if peak else None
    t = arms.get("trlc")
    same = len({tuple(r["tokens"]) for r in arms.values()}) <= 1
    if a.json:
        print(json.dumps(dict(arms={k: {x: y for x, y in r.items() if x != "tokens"} for k, r in arms.items()},
                              skipped=skipped, steps=a.steps, core=core, same_tokens=same,
                              useful_gflop=flops / 1e9, fma_peak_gflops=peak["peak_gflops"] if peak else None)))
        return 0 if arms and same else 1
    print(f"transformer decode, {a.steps} tokens (L={L}, H={H}, D={D}, F={F}, V={V}), core {core}, 1 thread; "
          f"useful work {flops / 1e9:.2f} GFLOP" + (f"; FMA peak {peak['peak_gflops']:.1f} GFLOP/s f32" if peak else ""))
    print(f"{'arm':<6}{'wall s':>9}{'CPU s':>9}{'CPU/trlc':>10}{'GFLOP/s':>9}{'FMA peak':>10}{'compile s':>10}{'RSS MB':>8}")
    for name, r in arms.items():
        ratio = f"{r['cpu_seconds'] / t['cpu_seconds']:.2f}x" if t else "n/a"
        share = f"{100 * r['fma_share']:.1f}%" if r["fma_share"] is not None else "n/a"
        print(f"{name:<6}{r['seconds']:>9.3f}{r['cpu_seconds']:>9.3f}{ratio:>10}{r['gflops_cpu']:>9.2f}{share:>10}"
              f"{r['compile_seconds']:>10.1f}{r['max_rss_mb']:>8.0f}")
    for name, why in skipped.items():
        print(f"{name:<6}skipped: {why}")
    print("tokens: " + ("the same in every arm" if same else "DIFFER between arms"))
    print("CPU/trlc: the arm's CPU time over trlc's (above 1: trlc is faster); trlc's includes its process start.")
    return 0 if arms and same else 1


if __name__ == "__main__":
    sys.exit(main())
