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
#
# Environment: TRLC_ASAN_BUILD (the build folder, default build-asan), LIT_OPTS as for lit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
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
nice lit -s ${LIT_OPTS:-} "${paths[@]}" || status=1

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
