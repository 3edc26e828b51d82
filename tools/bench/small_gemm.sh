#!/usr/bin/env bash
# tools/bench/small_gemm.sh — build tools/bench/small_gemm.cpp once per matrix-product library
# whose Debian package is installed, run each single-threaded, and print one markdown table
# (ns per call, best of 60 batches, and the share of the core's measured f32 FMA peak).
#
#   tools/bench/small_gemm.sh [OUTDIR]      (default /tmp/small_gemm; nothing else is written)
#
# Libraries (apt-get install libopenblas-dev libblis-dev libeigen3-dev libxsmm-dev libdnnl-dev):
# each missing one is skipped with a note.  Library variants that only differ in the kernels
# they pick at run time are run from the same binary with their selection variable set:
# OpenBLAS with its auto-detected core and OPENBLAS_CORETYPE=SkylakeX (its AVX-512 kernels and
# small-matrix path), BLIS with its auto-detected arch and BLIS_ARCH_TYPE=0 (skx) / 6 (zen3).
# Nothing here is part of the build of trlc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/small_gemm}
mkdir -p "$out"
src=$here/small_gemm.cpp
CXX=${CXX:-g++}
flags=(-std=c++17 -O3 -march=native -DNDEBUG)
multiarch=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

build() {  # name, extra flags...
    local name=$1
    shift
    if "$CXX" "${flags[@]}" "$src" -o "$out/$name" "$@" 2>"$out/$name.log"; then
        return 0
    fi
    echo "note: $name not built (see $out/$name.log)" >&2
    return 1
}

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1
results=$out/results.tsv
: >"$results"
build loop -DSG_LOOP && {
    "$out/loop" --peak >"$out/peak.tsv"
    "$out/loop" loop >>"$results"
}
if [ -f "$multiarch/cblas.h" ] || [ -f /usr/include/cblas.h ]; then
    build openblas -DSG_OPENBLAS -lopenblas && {
        "$out/openblas" openblas >>"$results"
        OPENBLAS_CORETYPE=SkylakeX "$out/openblas" openblas-skx >>"$results"
    }
fi
if [ -f "$multiarch/blis.h" ]; then
    build blis -DSG_BLIS -I"$multiarch" -lblis -lm && {
        "$out/blis" blis >>"$results"
        BLIS_ARCH_TYPE=0 "$out/blis" blis-skx >>"$results"
        BLIS_ARCH_TYPE=6 "$out/blis" blis-zen3 >>"$results"
    }
fi
if [ -d /usr/include/eigen3 ]; then
    build eigen -DSG_EIGEN -I/usr/include/eigen3 && "$out/eigen" eigen-dyn >>"$results"
    build eigen_fixed -DSG_EIGEN -DSG_EIGEN_FIXED -I/usr/include/eigen3 &&
        "$out/eigen_fixed" eigen-fixed >>"$results"
fi
if [ -f /usr/include/libxsmm.h ]; then
    build xsmm -DSG_XSMM -L/usr/lib -lxsmm -lxsmmnoblas -lpthread -ldl -lm &&
        "$out/xsmm" libxsmm >>"$results"
fi
if [ -f /usr/include/oneapi/dnnl/dnnl.h ]; then
    build dnnl -DSG_DNNL -ldnnl && "$out/dnnl" onednn >>"$results"
fi

python3 - "$results" "$out/peak.tsv" <<'EOF'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
peak = {l.split("\t")[1]: float(l.split("\t")[2].split()[0]) for l in open(sys.argv[2])}
ref = peak.get("avx512", peak["avx2"])
print("FMA peak measured: " + ", ".join(f"{k} {v:.2f} " + ("GHz" if k == "clock" else "flop/ns") for k, v in peak.items()))
print(f"share of peak below is against {ref:.1f} flop/ns ({'avx512' if 'avx512' in peak else 'avx2'})\n")
libs = list(dict.fromkeys(r[0] for r in rows))
shapes = list(dict.fromkeys((r[1], r[2], r[3], r[4]) for r in rows))
cell = {(r[0], (r[1], r[2], r[3], r[4])): r for r in rows}
print("| form M×N×K | " + " | ".join(libs) + " |")
print("|---|" + "---|" * len(libs))
for s in shapes:
    line = [f"{s[0]} {s[1]}×{s[2]}×{s[3]}"]
    best = min((float(cell[(l, s)][5]) for l in libs if (l, s) in cell and cell[(l, s)][5] != "n/a"), default=None)
    for l in libs:
        r = cell.get((l, s))
        if r is None or r[5] == "n/a":
            line.append("n/a"); continue
        ns, gf = float(r[5]), float(r[7])
        txt = f"{ns:.0f} ns {100 * gf / ref:.0f}%" + ("" if r[8] == "ok" else " WRONG")
        line.append(f"**{txt}**" if ns == best else txt)
    print("| " + " | ".join(line) + " |")
EOF
