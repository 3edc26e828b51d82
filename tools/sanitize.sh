#!/usr/bin/env bash
# sanitize.sh — trlc under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer.
#
# Builds trlc, trl-opt and the unit tests with -fsanitize=address,undefined (LeakSanitizer is
# part of ASan on Linux) in build-asan/ (RelWithDebInfo; ccache shared as for build/), then runs
# the unit tests and the lit suite against that build.  A test that expects trlc to fail would
# hide a report on stderr, so: ASan and LSan reports go to files under
# build-asan/sanitizer-reports/, and ASan and UBSan errors abort (SIGABRT, which lit's `not`
# counts as a failure; UBSan ignores log_path in an ASan build, GCC 12).  The run fails when
# any test fails or any report file was written, and prints the reports.
#
#   tools/sanitize.sh                       # unit tests + the whole lit suite
#   tools/sanitize.sh schedule interp       # unit tests + lit folders (or files) under test/lit
#   SANITIZE_NO_UNIT=1 tools/sanitize.sh schedule/clamp-split.trl   # lit only
#   tools/sanitize.sh --ci                  # CI's subset (.ci/run): unit tests, the lit folders
#                                           # of $ci_folders (every pass), and every sample built
#                                           # with trlc --sanitize=address,undefined, run short
#
# Environment: TRLC_ASAN_BUILD (the build folder, default build-asan), LIT_OPTS as for lit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# --ci: lit folders that between them run every pass of the pipeline (parse .. codegen, build,
# both interpreters, trl-opt) without the long training and program suites; then the samples.
ci_folders=(parse sema externs autodiff incrementalize cse pdg checks vectorize dead-points schedule
            memplan runtime-bounds codegen interp scheduled std driver trl-opt)
# Left out of --ci: the four slowest of them under ASan (the interpreters on many programs;
# 155, 140, 127 and 68 s of the folders' 621 s with 2 workers, 2-core machine).
ci_filter_out='scheduled/random-programs|scheduled/stage-programs|autodiff/gradcheck|autodiff/reinforce-learns'
samples=0
filter=()
if [ "${1:-}" = --ci ]; then
    shift
    set -- "${ci_folders[@]}"
    samples=1
    filter=(--filter-out "$ci_filter_out")
fi
build=${TRLC_ASAN_BUILD:-$root/build-asan}
flags='-fsanitize=address,undefined -fno-omit-frame-pointer'

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")} CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
nice cmake --build "$build"

reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"
export LSAN_OPTIONS="log_path=$reports/lsan"

status=0
start=$(date +%s)
if [ -z "${SANITIZE_NO_UNIT:-}" ]; then
    nice "$build/test/trlc_unit_tests" --gtest_brief=1 || status=1
fi
paths=()
for p in "$@"; do paths+=("$build/test/lit/$p"); done
[ ${#paths[@]} -eq 0 ] && paths=("$build/test/lit")
nice lit -s ${LIT_OPTS:-} "${filter[@]}" "${paths[@]}" || status=1

# The samples, built by the sanitized trlc with --sanitize=address,undefined (-O1, for a quicker
# build) and run on short budgets (-D) with 2 threads, in a scratch
# folder (their saves land there); a report, a crash or a non-zero exit fails.
if [ "$samples" = 1 ]; then
    work=$build/sanitize-samples
    rm -rf "$work"
    mkdir -p "$work"
    python3 "$root/tools/gpt_ref.py" make "$work"  # transformer_decode's weights
    while read -r name defines; do
        [ -z "$name" ] && continue
        s0=$(date +%s)
        # shellcheck disable=SC2086
        if nice "$build/compiler/trlc" "$root/samples/$name.trl" $defines -I "$root/samples" \
                -o "$work/$name" --sanitize=address,undefined -O1 \
            && (cd "$work" && nice "./$name" --quiet --threads 2 > "$name.jsonl"); then
            echo "sanitize.sh: sample $name $defines: $(wc -l < "$work/$name.jsonl") records, $(( $(date +%s) - s0 )) s"
        else
            echo "sanitize.sh: sample $name $defines FAILED"
            status=1
        fi
    done <<'SAMPLES'
returns
nstep_window
random_walks
cartpole_rollout -D T=50
extern_cartpole -D T=50
reinforce_cartpole -D I=2 -D T=100
nstep_cartpole -D I=20
ppo_cartpole -D I=3
ppo_pendulum -D I=2
transformer_decode -D T=16
SAMPLES
    # ThreadSanitizer on the host thread team and its row-split kernels (runtime/rt/
    # trl_rt_host.cpp, codegen/row_split.h): the two PPO samples with 2 threads and splits forced
    # on whatever the cores' round trip (TRL_SPLIT_MAX_ROUND_TRIP_US), equal to its run on one.
    for name in ppo_cartpole ppo_pendulum; do
        if nice "$build/compiler/trlc" "$root/samples/$name.trl" -D I=3 -I "$root/samples" \
                -o "$work/$name-tsan" --sanitize=thread -O1 \
            && (cd "$work" && TSAN_OPTIONS="log_path=$reports/tsan" TRL_SPLIT_MAX_ROUND_TRIP_US=1000 \
                nice "./$name-tsan" --quiet --threads 2 > "$name-tsan2.jsonl") \
            && (cd "$work" && TSAN_OPTIONS="log_path=$reports/tsan" \
                nice "./$name-tsan" --quiet --threads 1 > "$name-tsan1.jsonl") \
            && cmp -s "$work/$name-tsan2.jsonl" "$work/$name-tsan1.jsonl"; then
            echo "sanitize.sh: sample $name -D I=3 under ThreadSanitizer, 2 threads: same records"
        else
            echo "sanitize.sh: sample $name under ThreadSanitizer FAILED"
            status=1
        fi
    done
fi

n=$(find "$reports" -type f | wc -l)
echo "sanitize.sh: $n sanitizer report file(s), $(( $(date +%s) - start )) s of tests"
if [ "$n" -gt 0 ]; then
    for f in "$reports"/*; do
        echo "==== $f"
        head -60 "$f"
    done
    status=1
fi
exit $status
