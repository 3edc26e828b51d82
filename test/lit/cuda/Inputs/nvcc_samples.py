"""nvcc_samples.py TRLC RUNTIME_DIR SAMPLES_DIR OUT_DIR [JOBS] — compile every samples/*.trl (a
glob: new samples are covered without editing a test) with nvcc for sm_80 and sm_90: `trlc S
--emit=cuda`, then `nvcc -std=c++17 -O2 -fmad=false -gencode arch=compute_80,code=sm_80
-gencode arch=compute_90,code=sm_90 -I RUNTIME -x cu -c` (the driver's flags: NVVM's optimizer
on, as a GPU user's build), JOBS samples at a time (default 2).  CPU time of this compile, both
targets: ppo_cartpole 35 s (24 s with -Xcicc -O0), nstep_cartpole 22 s, reinforce_cartpole 12 s;
before kernel loops were marked `#pragma unroll 1` (TRLG_SEQ, codegen/expr_emitter.h) the
optimized build of ppo_cartpole took ~15 min, so this test used to pass -Xcicc -O0.  Compile
only (-c): the runtime's .cu and the link are the same for every sample, and the driver's full
build (`trlc -o --target=cuda`) is run once by the test.  Prints "compiled: NAME (sm_80,sm_90)"
per sample in name order, or "FAILED: NAME" with the tool's output, and exits 1 if any failed.
ptxas reports every kernel's stack frame (-Xptxas -v): a frame above 16 KiB fails the sample
("FRAME: NAME: KERNEL N bytes"; issue 18 point 2: CUDA allows 512 KiB of local memory per thread
and the driver reserves frame x resident threads, so large frames cannot launch); the largest
is printed as "frames: NAME <= 16384 bytes (largest N)".  No device function may be recursive (a
cycle in the PTX call graph, read from the kept .ptx files): ptxas cannot size such a kernel's
stack, the driver runs it on the default 1 KiB, and a kernel with larger locals overflows it
(seen on an H200: cartpole_rollout's "episodes" emit, whose record writer was recursive, failed
with an unspecified launch failure).  A recursive sample prints "RECURSIVE: NAME: FUNCTIONS", and
"calls: NAME acyclic" otherwise.  Nothing runs the code (no GPU in CI)."""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys

trlc, runtime, samples, out = sys.argv[1:5]
jobs = int(sys.argv[5]) if len(sys.argv) > 5 else 2
nvcc = os.environ.get("TRLC_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
os.makedirs(out, exist_ok=True)
files = sorted(glob.glob(os.path.join(samples, "*.trl")))
if not files:
    sys.exit(f"no samples in {samples}")


def build(path):
    name = os.path.basename(path)
    cu = os.path.join(out, name[:-4] + ".cu")
    keep = os.path.join(out, name[:-4] + ".keep")  # nvcc's intermediates: the PTX of both targets
    os.makedirs(keep, exist_ok=True)
    with open(cu, "wb") as f:
        p = subprocess.run([trlc, path, "--emit=cuda"], stdout=f, stderr=subprocess.PIPE)
    if p.returncode != 0:
        return name, False, p.stderr.decode(), ""
    p = subprocess.run([nvcc, "-std=c++17", "-O2", "-fmad=false",
                        "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
                        "-Xptxas", "-v", "-I", runtime, "-x", "cu", "-c", cu, "-o", cu[:-3] + ".o",
                        "-keep", "-keep-dir", keep],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ptx = ""
    for f in sorted(glob.glob(os.path.join(keep, "*.ptx"))):
        with open(f) as fh:
            ptx += fh.read() + "\n"
    shutil.rmtree(keep, ignore_errors=True)
    return name, p.returncode == 0, p.stdout.decode(), ptx


def recursive(ptx):
    """The functions on a cycle of the PTX call graph (.entry and .func bodies, `call` targets)."""
    calls, fn = {}, None
    for m in re.finditer(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(|\bcall(?:\.uni)?\s+"
                         r"(?:\([^)]*\)\s*,\s*)?([\w$]+)", ptx):
        if m.group(1):
            fn = m.group(1)
            calls.setdefault(fn, set())
        elif fn:
            calls[fn].add(m.group(2))
    on_cycle = set()
    for start in calls:  # a function reaching itself
        seen, todo = set(), list(calls[start])
        while todo:
            f = todo.pop()
            if f == start:
                on_cycle.add(start)
                break
            if f not in seen:
                seen.add(f)
                todo.extend(calls.get(f, ()))
    return sorted(on_cycle)


LIMIT = 16 * 1024


def frames(log):
    """(kernel, stack frame bytes) of every function ptxas compiled, from its -v output."""
    out, fn = [], None
    for line in log.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            fn = m.group(1)
        m = re.search(r"(\d+) bytes stack frame", line)
        if m and fn:
            out.append((fn, int(m.group(1))))
    return out


failed = False
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for name, ok, log, ptx in pool.map(build, files):
        if ok:
            print(f"compiled: {name} (sm_80,sm_90)")
            fr = frames(log)
            big = [(k, b) for k, b in fr if b > LIMIT]
            for k, b in big:
                print(f"FRAME: {name}: {k} {b} bytes")
            failed = failed or bool(big) or not fr
            print(f"frames: {name} {'<=' if not big else '>'} {LIMIT} bytes "
                  f"(largest {max((b for _, b in fr), default=-1)}, {len(fr)} functions)")
            rec = recursive(ptx)
            if rec:
                print(f"RECURSIVE: {name}: {' '.join(rec)}")
            failed = failed or bool(rec) or not ptx
            print(f"calls: {name} {'acyclic' if ptx and not rec else 'CYCLIC' if rec else 'NO PTX'}")
        else:
            failed = True
            print(f"FAILED: {name}\n{log}")
sys.exit(1 if failed else 0)
