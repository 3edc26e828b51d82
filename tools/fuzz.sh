#!/usr/bin/env bash
# fuzz.sh [SECONDS] — build the libFuzzer front-end target with clang-14 in build-fuzz/ and run it
# for SECONDS (default 60) on a seed corpus of samples/*.trl and test/lit/**/*.trl.
# Exits non-zero when libFuzzer finds a crash, a sanitizer error, an ICE, a timeout or an OOM;
# the reproducer is left in build-fuzz/findings/ (rerun: build-fuzz/test/fuzz/frontend_fuzzer FILE).
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRLC_FUZZ=ON -DTRLC_BUILD_TESTS=OFF >/dev/null
ninja -C "$build" frontend_fuzzer

corpus="$build/corpus"
findings="$build/findings"
mkdir -p "$corpus" "$findings"
shopt -s nullglob globstar
# Every sample is a seed, the training ones (REINFORCE, n-step, PPO) included: their check
# stage now takes well under a second (the zero-cycle proof splits the big component, and
# isl's transitive closure runs under an operation budget).
for f in "$root"/samples/*.trl "$root"/test/lit/**/*.trl "$root"/dsl/**/*.trl; do
  cp "$f" "$corpus/seed-$(echo "$f" | md5sum | cut -c1-12).trl"
done

# The working corpus grows in $corpus; the seeds stay in the tree.
exec "$build/test/fuzz/frontend_fuzzer" "$corpus" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=8192 \
  -artifact_prefix="$findings/" -print_final_stats=1
