#!/usr/bin/env bash
# device_check.sh — what a session lent a GPU runs, prepared here and run there in one call
# (issue 18 point 6, issue 17 point 3; .library/device/METHOD.md: one script, a short table last).
#
#   here (trlc, nvcc, no GPU):  bash tools/device_check.sh prepare [DIR]
#   on the GPU machine:         bash tools/device_check.sh run [DIR]      (writes under $OUT)
#
# prepare builds every sample and the probe programs below for CUDA (sm_90: H100 and H200, PTX
# embedded) and for the host at -D I=3 (3 iterations), runs the host builds here and keeps their
# outputs as the reference (tools/gpu_check.py --build-only --cuda), and builds PPO CartPole as a
# user does (977 iterations) for the timings, so the GPU machine runs only CUDA executables; DIR
# (default build/device, ignored by git) is what the device call carries (`carry:
# ["build/device"]`; about 55 MB).  run, on the GPU machine, phases in the order of their value,
# each under its own time cap (about 7 minutes in all, the lease's one call):
#   1. nvidia-smi; every CUDA executable against its host reference (bytes, or within
#      gpu_check's tolerance where cuBLAS sums differently), 4 at a time; 1b. PPO (3 iterations)
#      built with --distributed=nccl, run as one rank, against the CUDA build (issue 21);
#   2. PPO CartPole timed on the GPU, DEVICE_CHECK_PPO_ITERATIONS iterations (default 977), and
#      again with each TRLC_ROWS_THREADS of DEVICE_CHECK_ROWS_THREADS (row-split block sizes);
#   3. the same program's --profile for 20 iterations (the regions' time by CUDA events);
#   4. the JAX arm (tools/bench/peers/ppo_cartpole_jax.py, the whole training under one jax.jit)
#      on the same GPU (JAX_PLATFORMS=cuda), and the table: iterations, seconds, env steps per
#      second, the ratio per iteration;
#   5. every CUDA executable under compute-sanitizer memcheck, 8 at a time;
#   6. PPO CartPole (3 iterations) under racecheck and initcheck (DEVICE_CHECK_SANITIZERS).
# DEVICE_CHECK_MEMCHECK_S caps phase 5 (default 80 s); DEVICE_CHECK_NO_JAX=1 skips the JAX run.
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
    mkdir -p "$dir"
    printf '%s\n' "${progs[@]}" > "$dir/programs.txt"  # what run checks: the programs built here
    # -D I=3: programs whose I sizes a buffer or was checked only from its default up
    # (nstep_cartpole's 4000, reinforce_cartpole's 200) run 3 iterations too
    python3 tools/gpu_check.py --build-only --cuda --other-flags=--cuda-arch=sm_90 --define I=3 --bound I=3 \
        --out "$dir/check" --programs "${progs[@]}" || exit 1
    rm -rf "$dir/check/cache"  # the build cache stays here
    # PPO CartPole as a user builds it (977 iterations by default), for the timings
    build/compiler/trlc samples/ppo_cartpole.trl --target=cuda --cuda-arch=sm_90 -o "$dir/ppo_cartpole" || exit 1
    # PPO CartPole at -D I=3 with --distributed=nccl (issue 21): one rank there equals the check
    # build check/other/ppo_cartpole (the same flags without --distributed)
    if build/compiler/trlc --help | grep -q 'nccl (--target=cuda)'; then
        build/compiler/trlc samples/ppo_cartpole.trl -D I=3 --target=cuda --cuda-arch=sm_90 --distributed=nccl \
            -o "$dir/ppo_nccl" || echo "device_check: no --distributed=nccl build (phase 1b is skipped)"
    fi
    du -sh "$dir"
    echo "device_check: prepared $dir; on the GPU: bash tools/device_check.sh run $dir (carry $dir)"
    ;;
run)
    export PATH="$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer"  # compute-sanitizer
    # cuBLAS and the CUDA runtime of the toolkit there, should its loader not know the folder
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
    out=${OUT:-$dir/out}
    here=$PWD
    mkdir -p "$out"
    # Phases in the order of their value, each under its own time cap, so that a lease's one
    # call (about 7 minutes) brings back the correctness table and the timings even when a later
    # phase (the sanitizers) runs out of time.
    {
        echo "== $(date -u) $(nvidia-smi -L 2>&1 | head -1)"
        nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.sm --format=csv 2>&1
        if ldd "$dir/check/other/ppo_cartpole" 2>&1 | grep -q 'not found'; then  # cuBLAS elsewhere (pip's)
            lib=$(find /usr/local /opt /usr/lib -name 'libcublas.so.1*' 2>/dev/null | head -1)
            [ -n "$lib" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$lib")"
        fi
        ldd "$dir/check/other/ppo_cartpole" 2>&1 | grep -E 'cublas|cudart|not found'
        echo "== 1. every program: CUDA against the host reference (no sanitizer; 4 at a time)"
        mapfile -t progs < "$dir/programs.txt"
        timeout 110 python3 tools/gpu_check.py --prebuilt --cuda --bound I=3 --out "$dir/check" --timeout 90 \
            --sanitizer none --jobs 4 --programs "${progs[@]}"
        cp "$dir/check/gpu_check.json" "$out/" 2>/dev/null
        echo "== 1b. --distributed=nccl, one rank (mpirun -np 1 where MPI is installed), against the CUDA build"
        if [ ! -x "$dir/ppo_nccl" ]; then
            echo "skipped: no $dir/ppo_nccl (prepare could not build it)"
        elif ldd "$dir/ppo_nccl" 2>&1 | grep -q 'not found'; then
            echo "skipped: libraries missing here: $(ldd "$dir/ppo_nccl" 2>&1 | grep 'not found' | tr -s ' \t\n' ' ')"
        else
            mkdir -p "$out/nccl1" "$out/cuda1"
            launch=""; command -v mpirun > /dev/null && launch="mpirun --allow-run-as-root --oversubscribe -np 1"
            (cd "$out/nccl1" && timeout 60 $launch "$here/$dir/ppo_nccl" --quiet > out.jsonl 2> err.txt; echo "nccl exit $?")
            (cd "$out/cuda1" && timeout 60 "$here/$dir/check/other/ppo_cartpole" --quiet > out.jsonl 2> err.txt; echo "cuda exit $?")
            tail -3 "$out/nccl1/err.txt"
            for f in out.jsonl ppo_cartpole_policy.npz; do
                cmp "$out/nccl1/$f" "$out/cuda1/$f" && echo "$f: same bytes (1 NCCL rank = the CUDA build)"
            done
        fi
        ppo="$here/$dir/ppo_cartpole"  # as a user builds it: 977 iterations by default
        iters=${DEVICE_CHECK_PPO_ITERATIONS:-977}
        echo "== 2. PPO CartPole on the GPU: $iters iterations (--bound I=$iters), at most 150 s"
        mkdir -p "$out/ppo_cuda" && cd "$out/ppo_cuda" || exit 1
        t0=$(date +%s.%N)
        timeout 150 "$ppo" --bound I="$iters" --log ppo.jsonl > stdout.txt 2> stderr.txt
        rc=$?
        t1=$(date +%s.%N)
        cd "$here" || exit 1
        trlc_s=$(python3 -c "print(round($t1 - $t0, 2))")
        echo "trlc cuda: exit $rc, $trlc_s s wall, $(grep -c '"iteration"' "$out/ppo_cuda/ppo.jsonl" 2>/dev/null) iterations logged"
        tail -c 400 "$out/ppo_cuda/stderr.txt"; echo
        for v in ${DEVICE_CHECK_ROWS_THREADS:-}; do  # row-split blocks of other sizes (trl_rows_block)
            t0=$(date +%s.%N)
            (cd "$out/ppo_cuda" && TRLC_ROWS_THREADS=$v timeout 60 "$ppo" --bound I="$iters" --quiet --log rows$v.jsonl \
                > /dev/null 2> rows$v.err)
            echo "TRLC_ROWS_THREADS=$v: exit $?, $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s for $iters iterations"
        done
        echo "== 3. PPO CartPole --profile (20 iterations): the regions' time on the GPU (CUDA events)"
        (cd "$out" && timeout 30 "$ppo" --bound I=20 --quiet --log ppo20.jsonl --profile ppo_profile.json \
            > /dev/null 2> ppo_profile.txt; echo "exit $?"; head -12 ppo_profile.txt)
        echo "== 4. JAX on the same GPU (the whole training under one jax.jit), at most 100 s"
        if [ -z "${DEVICE_CHECK_NO_JAX:-}" ]; then
            JAX_PLATFORMS=cuda timeout 100 python3 tools/bench/peers/ppo_cartpole_jax.py --iterations 977 \
                --log "$out/jax.jsonl" > "$out/jax.txt" 2>&1
            echo "jax: exit $?: $(tail -1 "$out/jax.txt")"
        fi
        python3 - "$trlc_s" "$out/jax.txt" "$out/ppo_cuda/ppo.jsonl" "$rc" "$iters" <<'PY'
import json, sys
trlc_s, trlc_rc, iters = float(sys.argv[1]), int(sys.argv[4]), int(sys.argv[5])
try:
    jax = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
except Exception:
    jax = {}
rets = []
try:
    for line in open(sys.argv[3]):
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a line cut by the time limit
        if "episodic_return" in r:
            rets.append(r["episodic_return"])
except OSError:
    pass
last = rets[-100:]
print(f"{'arm':10s} {'iters':>6s} {'train s':>9s} {'steps/s':>10s}  notes")
if trlc_rc != 0:
    print(f"{'trlc cuda':10s} FAILED or cut (exit {trlc_rc} after {trlc_s} s; ppo_cuda/stderr.txt)")
else:
    print(f"{'trlc cuda':10s} {iters:6d} {trlc_s:9.2f} {iters * 512 / trlc_s:10.0f}  wall of the whole program "
          f"(start-up included); last-100 mean {sum(last) / max(1, len(last)):.1f}")
if jax:
    js = jax.get("train_seconds", float("nan"))
    print(f"{'jax':10s} {977:6d} {js:9.2f} {977 * 512 / js:10.0f}  compile {jax.get('compile_seconds')} s apart; "
          f"jax {jax.get('jax')}")
    if trlc_rc == 0:
        print(f"trlc / jax time per iteration: {trlc_s / iters / (js / 977):.2f} (< 1: trlc faster)")
PY
        echo "== 5. every program under compute-sanitizer memcheck (8 at a time, 60 s each)"
        timeout ${DEVICE_CHECK_MEMCHECK_S:-80} python3 tools/gpu_check.py --prebuilt --cuda --bound I=3 --out "$dir/check" --timeout 60 \
            --sanitizer memcheck --sanitize-timeout 60 --jobs 8 --programs "${progs[@]}"
        echo "== 6. PPO under ${DEVICE_CHECK_SANITIZERS:-racecheck initcheck} (3 iterations)"
        mkdir -p "$out/ppo_sanitize" && cd "$out/ppo_sanitize" || exit 1
        for tool in ${DEVICE_CHECK_SANITIZERS:-racecheck initcheck}; do  # the check build: 3 iterations (-D I=3)
            timeout 45 compute-sanitizer --tool $tool --error-exitcode 9 "$here/$dir/check/other/ppo_cartpole" --quiet \
                > "$out/$tool.txt" 2>&1
            echo "$tool: exit $? ($(grep -c -i 'error' "$out/$tool.txt") lines with 'error')"
            tail -3 "$out/$tool.txt"
        done
        cd "$here" || exit 1
        echo "== done $(date -u)"
    } 2>&1 | tee "$out/device_check.txt"
    ;;
*)
    echo "usage: bash tools/device_check.sh prepare|run [DIR]   (see the comment at the top)" >&2
    exit 2
    ;;
esac
