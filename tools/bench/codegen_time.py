#!/usr/bin/env python3
"""Benchmark of code generation (issue 4), per sample:

  trlc ms     `trlc FILE --emit=cuda` (front end to the .cu), median of REPEAT runs
  c++ s       host build of that .cu with the runtime: c++ -std=c++17 -O2 -fopenmp
              -ffp-contract=off (the flags of `trlc -o --target=host`), one run
  prog ms     the generated host program (--quiet), median of REPEAT runs
  interp ms   `trlc FILE --interpret` on the same program, median of REPEAT runs
  speedup     interp ms / prog ms

Process wall times (start-up included).  The runtime's sources are compiled once, outside
the c++ column, which is the generated file's compile plus the link.  The generated program
and the interpreter must print the same bytes; a difference is reported and fails the run.

usage: tools/bench/codegen_time.py [--trlc build/compiler/trlc] [--cxx c++] [--repeat 5]
                                   [--threads N] [--json] [FILES...]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIME = os.path.join(ROOT, "runtime")
RUNTIME_SOURCES = ["rt/trl_rt_common.cpp", "rt/trl_checkpoint.cpp", "rt/trl_profile.cpp", "rt/trl_dist.cpp", "rt/trl_rt_host.cpp", "trl_npy.cpp", "trl_json.cpp"]
FLAGS = ["-std=c++17", "-O2", "-fopenmp", "-ffp-contract=off"]


def timed(cmd, cwd=None, out=subprocess.DEVNULL):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
    return (time.perf_counter() - t0) * 1000, p


def median_run(cmd, repeat, cwd=None):
    times, last = [], None
    for _ in range(repeat):
        ms, p = timed(cmd, cwd, subprocess.PIPE)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()}")
        times.append(ms)
        last = p.stdout
    return statistics.median(times), last


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="--threads N for the generated program")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "samples", "*.trl")))
    work = tempfile.mkdtemp(prefix="trlc-bench-")
    try:
        objs = []
        for src in RUNTIME_SOURCES:
            obj = os.path.join(work, os.path.basename(src) + ".o")
            subprocess.run([args.cxx] + FLAGS + ["-I", RUNTIME, "-c", os.path.join(RUNTIME, src), "-o", obj],
                           check=True)
            objs.append(obj)
        rows = []
        for f in files:
            name = os.path.relpath(os.path.abspath(f), ROOT)
            trlc_ms, source = median_run([args.trlc, f, "--emit=cuda"], args.repeat)
            d = os.path.join(work, os.path.basename(f)[:-4])
            os.makedirs(d)
            cu, exe = os.path.join(d, "prog.cu"), os.path.join(d, "prog")
            with open(cu, "wb") as out:
                out.write(source)
            cxx_ms, p = timed([args.cxx] + FLAGS + ["-I", RUNTIME, "-x", "c++", cu, "-x", "none"] + objs +
                              ["-lopenblas", "-o", exe])
            if p.returncode != 0:
                sys.exit(f"{name}: the host build failed:\n{p.stderr.decode()}")
            run = [exe, "--quiet"] + (["--threads", str(args.threads)] if args.threads else [])
            prog_ms, prog_out = median_run(run, args.repeat, cwd=d)
            interp_ms, interp_out = median_run([args.trlc, os.path.abspath(f), "--interpret"], args.repeat, cwd=d)
            rows.append({"sample": name, "trlc_ms": round(trlc_ms, 1), "cxx_s": round(cxx_ms / 1000, 2),
                         "program_ms": round(prog_ms, 1), "interpret_ms": round(interp_ms, 1),
                         "speedup": round(interp_ms / prog_ms, 1) if prog_ms > 0 else None,
                         "same_output": prog_out == interp_out})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"repeat": args.repeat, "cxx": args.cxx, "flags": FLAGS, "samples": rows}, indent=2))
    else:
        print(f"{'sample':32} {'trlc ms':>8} {'c++ s':>7} {'prog ms':>8} {'interp ms':>10} {'speedup':>8}  output")
        for r in rows:
            print(f"{r['sample']:32} {r['trlc_ms']:8.1f} {r['cxx_s']:7.2f} {r['program_ms']:8.1f} "
                  f"{r['interpret_ms']:10.1f} {r['speedup']:7.1f}x  {'same' if r['same_output'] else 'DIFFERENT'}")
        print(f"(median of {args.repeat} runs; c++ = {args.cxx} {' '.join(FLAGS)}, one run)")
    if not all(r["same_output"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
