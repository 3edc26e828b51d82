#!/usr/bin/env python3
"""gpu_check.py — every sample and test program on the GPU, against the host build (issue 17
point 3, issue 18): one command for the day a GPU is there.

For each program it builds two executables with trlc -o and runs both with the same flags:
  reference  --target=host
  candidate  --target=cuda (with a GPU), or a second host build at -O1 (--host-only: the
             comparison half, testable without a GPU), or with --emu the CUDA program's kernels
             run as the device runs them, on the host, under ThreadSanitizer (--target=cuda-emu
             --sanitize=thread -O1: every grid thread a task in shuffled order; issue 18 point
             6; CI runs that), where any ThreadSanitizer report is a failure
then compares what they printed (stdout, the emit records) and every file they wrote (.npz/.npy
saves): "same" when byte-identical, "close" when every number is within the tolerance
(--rtol, --atol; dsl/README.md §7.7 documents where CUDA may differ: cuBLAS products), else
"DIFF" with the first differing value.  With a GPU it also runs each CUDA executable under
compute-sanitizer (memcheck; any report is a failure).  One table at the end; exit 1 when any
program fails to build or run, differs beyond tolerance, or has a sanitizer report.

Without a GPU (nvidia-smi lists none) and without --host-only it says so and exits 0.

Where the GPU machine cannot run trlc (a lent device: no isl or LLVM there), build here and run
there: `--build-only --cuda --out DIR` builds both executables of every program into DIR (nvcc
compiles CUDA without a GPU) and runs the host ones here, keeping their outputs as the
reference, and `--prebuilt --out DIR` on the GPU machine runs the CUDA ones and compares them
with it (tools/device_check.sh does both halves, and times PPO against JAX there).

    bash tools/gpu_check.sh [--trlc build/compiler/trlc] [--host-only] [--out DIR]
        [--programs a.trl ...] [--bound I=3] [--define I=3] [--other-flags "--cuda-arch=sm_90"]
        [--timeout 600] [--emu]
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys

# Programs whose default size is a full training run too long for a check (and for --emu's
# ThreadSanitizer): both builds get these trlc -D flags, as tools/sanitize.sh runs its samples
# on short budgets.  samples/dqn_cartpole.trl trains 500,000 steps (18 s on the host, far more
# under --emu); at T = 10,300 it makes 29 updates on a full replay window, and the host build
# prints what --interpret does (test/lit/programs/dqn-sample-oracle.test).  transformer_decode's
# 64 steps take 74 s under --emu (0.1 s on the host build); 16 still fill 4 layers' caches.
SHORT_BUDGETS = {"dqn_cartpole": ["-D", "T=10300"], "transformer_decode": ["-D", "T=16"]}
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gpu_present():
    smi = os.environ.get("TRLC_NVIDIA_SMI", "nvidia-smi")  # another nvidia-smi (tests)
    if not shutil.which(smi):
        return False, "nvidia-smi is not installed"
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if r.returncode == 0 and "GPU " in r.stdout:
        return True, r.stdout.strip().splitlines()[0]
    return False, "nvidia-smi -L lists no GPU"


def numbers(text):
    """Every number in the JSON Lines "text", in order (non-JSON lines compared as text)."""
    out = []

    def walk(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            out.append(v)
        elif isinstance(v, (int, float)):
            out.append(float(v))
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k in sorted(v):
                out.append(k)
                walk(v[k])

    for line in text.splitlines():
        try:
            walk(json.loads(line))
        except ValueError:
            out.append(line)
    return out


def npz_numbers(path):
    try:
        import numpy as np
    except ImportError:
        return None
    try:
        data = np.load(path)
        if hasattr(data, "files"):
            return [float(x) for k in data.files for x in np.asarray(data[k], dtype=np.float64).ravel()]
        return [float(x) for x in np.asarray(data, dtype=np.float64).ravel()]
    except Exception:
        return None


def close(a, b, rtol, atol):
    """"" when lists "a" and "b" agree within tolerance, else the first difference."""
    if a is None or b is None:
        return "unreadable"
    if len(a) != len(b):
        return f"{len(a)} values vs {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, float) and isinstance(y, float):
            if math.isnan(x) and math.isnan(y):
                continue
            if not abs(x - y) <= atol + rtol * max(abs(x), abs(y)):
                return f"value {k}: {x!r} vs {y!r}"
        elif x != y:
            return f"value {k}: {x!r} vs {y!r}"
    return ""


def run(cmd, cwd, timeout, env=None):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout} s", time.perf_counter() - t0
    return r, "" if r.returncode == 0 else f"exit {r.returncode}: {r.stderr.strip()[-300:]}", time.perf_counter() - t0


REFERENCE = ".reference-stdout"  # a host run's stdout, kept by --build-only --cuda for --prebuilt


def bounds_for(exe, wanted):
    """The NAME=V of "wanted" that executable "exe" accepts: a bound it does not have is left out,
    one below the smallest value it was checked for is raised to that value (its --help)."""
    if not wanted:
        return []
    r = subprocess.run([exe, "--help"], capture_output=True, text=True)
    text = r.stdout + r.stderr
    out = []
    for b in wanted:  # its --help: "  I    = 977  (--bound may change it; at least 2)"
        name, _, value = b.partition("=")
        m = re.search(r"^  " + re.escape(name) + r" +=.*\(--bound may change it(?:; at least (\d+))?", text, re.M)
        if not m:
            continue  # no such bound, or fixed (sizes a buffer)
        out.append(f"{name}={max(int(value), int(m.group(1)))}" if m.group(1) and value.isdigit() else b)
    return out


def input_scripts(prog, text):
    """The scripts that write the files a program `load`s: the .py files beside it or in tools/
    whose docstring's start names it, e.g. make_eval_inputs.py for eval-loaded-policy.trl,
    tools/gpt_ref.py for samples/transformer_decode.trl."""
    if not re.search(r"^load ", text, re.M):
        return []
    d, base, out = os.path.dirname(prog), os.path.basename(prog), []
    for py in sorted(glob.glob(os.path.join(d, "*.py")) + glob.glob(os.path.join(ROOT, "tools", "*.py"))):
        with open(py) as f:
            head = f.read(2000)
        if base in head:
            out.append(py)
    return out


def check(prog, a, gpu, out):
    name = os.path.splitext(os.path.basename(prog))[0]
    row = {"program": os.path.relpath(prog, ROOT), "status": "ok"}
    other = (["--target=cuda"] if gpu else ["--target=cuda-emu", "--sanitize=thread", "-O1"] if a.emu else
             ["--target=host", "-O1"])
    with open(prog) as f:  # --define: the bounds this program has (a dim's `< NAME =`)
        text = f.read()
    defines = [f for d in a.define if re.search(r"<\s*" + re.escape(d.split("=")[0]) + r"\s*=", text)
               for f in ("-D", d)]
    defines += SHORT_BUDGETS.get(name, []) if os.path.dirname(os.path.abspath(prog)) == os.path.join(ROOT, "samples") else []
    builds = {"host": ["--target=host"] + defines, "other": other + defines + a.other_flags.split()}
    exe = {}
    for kind, flags in builds.items():
        d = os.path.join(out, kind)
        os.makedirs(d, exist_ok=True)
        exe[kind] = os.path.join(d, name)
        if a.prebuilt:  # built by an earlier --build-only (on a machine with trlc and nvcc)
            if not os.access(exe[kind], os.X_OK):
                row.update(status="FAIL", detail=f"{kind} build: {exe[kind]} missing (--build-only first)")
                return row
            continue
        # trlc's build cache in --out: the runtime's objects are compiled once per flag set, and
        # a rerun with the same trlc and inputs copies the executables.
        r, err, _ = run([a.trlc, prog, "-o", exe[kind]] + flags, ROOT, a.timeout,
                        env=dict(os.environ, TRLC_CACHE_DIR=os.path.join(out, "cache")))
        if err:
            row.update(status="FAIL", detail=f"{kind} build: {err}")
            return row
    kinds = list(builds)
    if a.build_only:
        if not a.cuda:
            row["outputs"] = "built"
            return row
        kinds = ["host"]  # the reference outputs, computed here: the GPU machine need not run it
    results, run_flags = {}, {}  # run_flags: each executable's --quiet and --bound flags
    for kind in kinds:
        wd = os.path.join(out, kind, name + ".run")
        ref = os.path.join(wd, REFERENCE)
        if a.prebuilt and kind == "host" and os.path.exists(ref):  # --build-only --cuda ran it
            with open(ref) as f:
                results[kind] = (f.read(), wd)
            row["host_s"] = "ref"
            continue
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        for script in input_scripts(prog, text):  # the files its `load`s read
            subprocess.run([sys.executable, script, wd], check=True)
        flags = ["--quiet"] + [f for b in bounds_for(exe[kind], a.bound) for f in ("--bound", b)]
        run_flags[kind] = flags
        r, err, secs = run([exe[kind]] + flags, wd, a.timeout)
        if not err and r is not None and "ThreadSanitizer" in r.stderr:
            err = "ThreadSanitizer: " + r.stderr[r.stderr.index("ThreadSanitizer"):][:300]
        if err:
            row.update(status="FAIL", detail=f"{kind} run: {err}")
            return row
        row[kind + "_s"] = round(secs, 2)
        results[kind] = (r.stdout, wd)
        if a.build_only:
            with open(ref, "w") as f:
                f.write(r.stdout)
    if a.build_only:
        row["outputs"] = "built, host reference run"
        return row
    (sa, wa), (sb, wb) = results["host"], results["other"]
    files = sorted(n for n in set(os.listdir(wa)) | set(os.listdir(wb)) if n != REFERENCE)
    same = sa == sb and all(
        os.path.exists(os.path.join(wa, f)) and os.path.exists(os.path.join(wb, f)) and
        open(os.path.join(wa, f), "rb").read() == open(os.path.join(wb, f), "rb").read() for f in files)
    if same:
        row["outputs"] = "same"
    else:
        why = close(numbers(sa), numbers(sb), a.rtol, a.atol)
        for f in files:
            if why:
                break
            pa, pb = os.path.join(wa, f), os.path.join(wb, f)
            if not (os.path.exists(pa) and os.path.exists(pb)):
                why = f"{f} written by one build only"
            elif f.endswith((".npz", ".npy")):
                why = close(npz_numbers(pa), npz_numbers(pb), a.rtol, a.atol)
                why = f"{f}: {why}" if why else ""
            elif open(pa, "rb").read() != open(pb, "rb").read():
                why = close(numbers(open(pa).read()), numbers(open(pb).read()), a.rtol, a.atol)
                why = f"{f}: {why}" if why else ""
        row["outputs"] = "close" if not why else "DIFF"
        if why:
            row.update(status="FAIL", detail=why)
    if gpu and a.sanitizer != "none" and shutil.which("compute-sanitizer"):
        wd = os.path.join(out, "other", name + ".sanitize")
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        flags = run_flags["other"]  # as the plain run above
        r, err, _ = run(["compute-sanitizer", "--tool", a.sanitizer, "--error-exitcode", "9", exe["other"]] + flags,
                        wd, a.sanitize_timeout or a.timeout * 20)
        row["sanitizer"] = "clean" if not err else "REPORT"
        if err:
            row.update(status="FAIL", detail=(row.get("detail", "") + " sanitizer: " + err)[:400])
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--host-only", action="store_true", help="compare two host builds (no GPU needed)")
    ap.add_argument("--emu", action="store_true",
                    help="without a GPU: the candidate is --target=cuda-emu under ThreadSanitizer (CUDA "
                         "semantics on the host; implies --host-only)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "gpu_check"))
    ap.add_argument("--programs", nargs="*", default=None,
                    help="default: samples/*.trl and test/lit/programs/Inputs/*.trl")
    ap.add_argument("--bound", action="append", default=[], help="NAME=V passed as --bound to every run")
    ap.add_argument("--define", action="append", default=[],
                    help="NAME=V compiled into both builds (trlc -D) of every program with a bound NAME")
    ap.add_argument("--other-flags", default="",
                    help="extra trlc flags of the candidate build (e.g. --cuda-arch=sm_90)")
    ap.add_argument("--build-only", action="store_true",
                    help="build both executables of every program into --out and stop (with --cuda: "
                         "the CUDA build, even without a GPU here)")
    ap.add_argument("--prebuilt", action="store_true",
                    help="run and compare the executables an earlier --build-only left in --out "
                         "(on a GPU machine without trlc's toolchain)")
    ap.add_argument("--cuda", action="store_true", help="the candidate is the CUDA build even without a GPU here")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-6)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--sanitizer", default="memcheck",
                    help="compute-sanitizer tool for the CUDA runs on a GPU (memcheck, racecheck, initcheck, "
                         "synccheck), or none")
    ap.add_argument("--sanitize-timeout", type=int, default=0,
                    help="seconds per sanitizer run (default 20 x --timeout)")
    ap.add_argument("--jobs", type=int, default=1, help="programs checked at once (a GPU is shared by them)")
    a = ap.parse_args()
    a.out = os.path.abspath(a.out)  # the runs' working directories are below it
    gpu, why = gpu_present()
    if a.emu:
        gpu, why, a.host_only = False, "CUDA semantics on the host (--emu)", True
    if a.cuda and a.build_only:
        gpu, why = True, "CUDA builds for a GPU elsewhere (--build-only --cuda)"
    if not gpu and not a.host_only:
        print(f"gpu_check: no GPU ({why}): nothing to run (--host-only compares two host builds)")
        return 0
    print(f"gpu_check: {'GPU: ' + why if gpu else 'host only (no GPU)'}", flush=True)
    progs = a.programs or sorted(glob.glob(os.path.join(ROOT, "samples", "*.trl")) +
                                 glob.glob(os.path.join(ROOT, "test", "lit", "programs", "Inputs", "*.trl")))
    os.makedirs(a.out, exist_ok=True)
    rows = []

    def one(p):
        try:
            return check(os.path.abspath(p), a, gpu, a.out)
        except Exception as e:  # a broken program's check must not lose the others' rows
            return {"program": os.path.relpath(p, ROOT), "status": "FAIL", "detail": f"gpu_check: {e!r}"}

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for row in pool.map(one, progs):
            rows.append(row)
            print(f"{row['program']:48s} {row['status']:4s} host {row.get('host_s', '-'):>6} s  "
                  f"{'cuda' if gpu else 'emu ' if a.emu else '-O1 '} {row.get('other_s', '-'):>6} s  "
                  f"outputs {row.get('outputs', '-'):5s}"
                  f"{'  sanitizer ' + row['sanitizer'] if 'sanitizer' in row else ''}"
                  f"{'  ' + row['detail'] if 'detail' in row else ''}", flush=True)
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"gpu_check: {len(rows) - len(failed)} of {len(rows)} programs ok")
    with open(os.path.join(a.out, "gpu_check.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
