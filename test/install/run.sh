#!/usr/bin/env bash
# The install and the CMake package (issue 17 point 1): `cmake --install` into a fresh prefix,
# then an outside project (test/install/project) configured with find_package(trlc) builds
# samples/returns.trl and a program that imports a module of its own through
# trlc_add_program, with the *installed* trlc (runtime and std library found under the prefix);
# the programs print what `trlc --interpret` prints; a C program links against the library
# trlc_add_library generates from test/install/project/policy.trl (issue 17 point 2) and gets
# its outputs; editing the imported module rebuilds the program that imports it (and only that
# one); an unchanged tree rebuilds nothing.
#   bash test/install/run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/trlc-install-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
export TRLC_CACHE_DIR=$work/cache
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cp -r "$src/test/install/project" "$work/project"
# The installed trlc reads the installed standard library (and runtime), not the source tree.
printf 'import std.rl\ndim t < T = 2\nx[t] = 1.0\nemit "e"[t] { x: x[t] }\n' > "$work/std.trl"
"$work/prefix/bin/trlc" "$work/std.trl" --emit=cuda > "$work/std.cu"
grep -q "\"$work/prefix/share/trlc/dsl/std/rl.trl\"" "$work/std.cu" ||
    { echo "FAIL: the installed trlc does not read the installed std library:"; grep -A3 kTrlFiles "$work/std.cu"; exit 1; }
gen=()
if command -v ninja > /dev/null; then gen=(-G Ninja); fi
cmake -S "$work/project" -B "$work/b" "${gen[@]}" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DRETURNS_TRL="$src/samples/returns.trl" > "$work/configure.log"
grep -q "returns: $work/b/bin/returns" "$work/configure.log" || { echo "FAIL: returns_EXECUTABLE"; exit 1; }
cmake --build "$work/b" > "$work/build1.log"
"$work/b/bin/returns" --quiet > "$work/returns.out"
"$work/prefix/bin/trlc" "$src/samples/returns.trl" --interpret > "$work/returns.ref"
diff "$work/returns.ref" "$work/returns.out"
"$work/b/bin/scaled" --quiet > "$work/scaled1.out"
printf '{"x":0}\n{"x":2}\n{"x":4}\n' | diff - "$work/scaled1.out"
# The library: its header and libpolicy.so under the build tree, linked into a C program.
"$work/b/call_policy" > "$work/call_policy.out"
echo "y 2 7 -1 best 1" | diff - "$work/call_policy.out"
# Nothing changed: nothing runs trlc.
cmake --build "$work/b" > "$work/build2.log"
if grep -q "trlc " "$work/build2.log"; then echo "FAIL: an unchanged tree rebuilt"; cat "$work/build2.log"; exit 1; fi
# The imported module edited: scaled is rebuilt (and only it), with the new factor.
sleep 1
printf 'fn scale(a) = a * 5\n' > "$work/project/lib.trl"
cmake --build "$work/b" > "$work/build3.log"
grep -q "trlc scaled.trl -> scaled" "$work/build3.log" || { echo "FAIL: the edit did not rebuild scaled"; cat "$work/build3.log"; exit 1; }
if grep -q "returns.trl -> returns" "$work/build3.log"; then echo "FAIL: returns rebuilt"; exit 1; fi
"$work/b/bin/scaled" --quiet > "$work/scaled2.out"
printf '{"x":0}\n{"x":5}\n{"x":10}\n' | diff - "$work/scaled2.out"
echo "install package: ok"
