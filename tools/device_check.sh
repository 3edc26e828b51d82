#!/usr/bin/env bash
# device_check.sh — what a session lent a GPU runs, prepared here and run there in one call
# (issue 18 point 6, issue 17 point 3; .library/device/METHOD.md: one script, a short table last).
#
#   here (trlc, nvcc, no GPU):  bash tools/device_check.sh prepare [DIR]
#   on the GPU machine:         bash tools/device_check.sh run [DIR]      (writes under $OUT)
#
# prepare builds every sample and the probe programs below for CUDA (sm_90: H100 and H200, PTX
# embedded) and for the host, runs the host builds here at --bound I=3 and keeps their outputs
# as the reference (tools/gpu_check.py --build-only --cuda), so the GPU machine runs only CUDA
# executables; DIR (default build/device, ignored by git) is what the device call carries
# (`carry: ["build/device"]`; about 30 MB).  run, on the GPU machine:
#   1. nvidia-smi -L; every CUDA executable at --bound I=3 against its host reference (bytes, or
#      within gpu_check's tolerance where cuBLAS sums differently) and under compute-sanitizer
#      memcheck (gpu_check.py --prebuilt);
#   2. PPO CartPole under compute-sanitizer racecheck and initcheck (--bound I=2);
#   3. PPO CartPole's full training (977 iterations) timed on the GPU, then the JAX arm
#      (tools/bench/peers/ppo_cartpole_jax.py, the whole training under one jax.jit) on the same
#      GPU (JAX_PLATFORMS=cuda), and the table: wall seconds, env steps per second, ratio.
# Every log goes to $OUT (default DIR/out).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
dir=${2:-build/device}
probes="a2c-gae dqn-window framestack gru-policy mixed-precision std-all"

case "$mode" in
prepare)
    progs=(samples/*.trl)
    for p in $probes; do progs+=("test/lit/programs/Inputs/$p.trl"); done
    rm -rf "$dir/check"
    python3 tools/gpu_check.py --build-only --cuda --other-flags=--cuda-arch=sm_90 --bound I=3 \
        --out "$dir/check" --programs "${progs[@]}" || exit 1
    rm -rf "$dir/check/cache"  # the build cache stays here
    du -sh "$dir"
    echo "device_check: prepared $dir; on the GPU: bash tools/device_check.sh run $dir (carry $dir)"
    ;;
run)
    export PATH="$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer"  # compute-sanitizer
    # cuBLAS and the CUDA runtime of the toolkit there, should its loader not know the folder
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
    out=${OUT:-$dir/out}
    mkdir -p "$out"
    {
        echo "== $(date -u) $(nvidia-smi -L 2>&1 | head -1)"
        nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv 2>&1
        ldd "$dir/check/other/ppo_cartpole" 2>&1 | grep -E 'cublas|cudart|not found' 
        echo "== 1. every program: CUDA against the host reference, memcheck"
        python3 tools/gpu_check.py --prebuilt --cuda --bound I=3 --out "$dir/check" --timeout 300
        cp "$dir/check/gpu_check.json" "$out/" 2>/dev/null
        ppo="$dir/check/other/ppo_cartpole"
        mkdir -p "$out/ppo_sanitize" && cd "$out/ppo_sanitize" || exit 1
        for tool in racecheck initcheck; do
            echo "== 2. compute-sanitizer --tool $tool: ppo_cartpole --bound I=2"
            timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 "$OLDPWD/$ppo" --bound I=2 --quiet \
                > "$out/$tool.txt" 2>&1
            echo "exit $? ($(grep -c -i 'error' "$out/$tool.txt") lines with 'error'; $out/$tool.txt)"
            tail -3 "$out/$tool.txt"
        done
        cd "$OLDPWD" || exit 1
        echo "== 3. PPO CartPole, full training (977 iterations), trlc CUDA then JAX on the same GPU"
        mkdir -p "$out/ppo_cuda" && cd "$out/ppo_cuda" || exit 1
        t0=$(date +%s.%N)
        timeout 900 "$OLDPWD/$ppo" --log ppo.jsonl --quiet > stdout.txt 2> stderr.txt
        rc=$?
        t1=$(date +%s.%N)
        cd "$OLDPWD" || exit 1
        trlc_s=$(python3 -c "print(round($t1 - $t0, 2))")
        echo "trlc cuda: exit $rc, $trlc_s s wall; $(tail -2 "$out/ppo_cuda/stderr.txt")"
        JAX_PLATFORMS=cuda timeout 900 python3 tools/bench/peers/ppo_cartpole_jax.py --iterations 977 \
            --log "$out/jax.jsonl" > "$out/jax.txt" 2>&1
        echo "jax: exit $?: $(tail -1 "$out/jax.txt")"
        python3 - "$trlc_s" "$out/jax.txt" "$out/ppo_cuda/ppo.jsonl" "$rc" <<'EOF'
import json, sys
trlc_s, trlc_rc = float(sys.argv[1]), int(sys.argv[4])
try:
    jax = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
except Exception:
    jax = {}
steps = 977 * 512
try:
    rets = [json.loads(l).get("episodic_return") for l in open(sys.argv[3]) if "episodic_return" in l]
except OSError:
    rets = []
last = rets[-100:]
print(f"{'arm':10s} {'train s':>9s} {'steps/s':>10s}  notes")
if trlc_rc != 0:
    print(f"{'trlc cuda':10s} FAILED (exit {trlc_rc}; ppo_cuda/stderr.txt)")
else:
    print(f"{'trlc cuda':10s} {trlc_s:9.2f} {steps / trlc_s:10.0f}  wall of the whole program (init, "
          f"compile-free); last-100 mean {sum(last) / max(1, len(last)):.1f}")
if jax:
    js = jax.get("train_seconds", float("nan"))
    print(f"{'jax':10s} {js:9.2f} {steps / js:10.0f}  compile {jax.get('compile_seconds')} s apart; "
          f"jax {jax.get('jax')}")
    if trlc_rc == 0:
        print(f"trlc / jax time: {trlc_s / js:.2f} (< 1: trlc faster)")
EOF
    } 2>&1 | tee "$out/device_check.txt"
    ;;
*)
    echo "usage: bash tools/device_check.sh prepare|run [DIR]   (see the comment at the top)" >&2
    exit 2
    ;;
esac
