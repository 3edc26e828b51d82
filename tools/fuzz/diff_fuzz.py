#!/usr/bin/env python3
"""diff_fuzz.py — differential fuzzing of trlc's back end: random well-formed programs
(tools/fuzz/gen_trl.py) run through `trlc --interpret` (the oracle), `trlc --interpret=scheduled`
(schedule, batch axes, memory plan), sometimes `--interpret=scheduled -fno-vectorize`, and a host
build (`trlc p.trl -o p --target=host -fno-blas -O<0|1|2> [-fno-fuse] [-fno-vectorize]`, then
`./p --quiet [--threads 2]`, and `./p --bound NAME=V` against `--interpret -D NAME=V` for each
bound the program may change at run time; a program with a loop to checkpoint also runs with
`--checkpoint ck.bin --checkpoint-every K` (K of 1, 2, 3, 5) and then once more with `--resume`,
which continues after the last checkpoint written (the resumed arena starts as 0xff bytes, so a
value the checkpoint misses shows): its log and saved files (those written again after the
checkpoint, the others kept from the first run) must be the plain run's; about a third of the builds are `--target=cuda-emu`
instead: the CUDA program's kernels as the device runs them, each grid thread a task in shuffled
order, with device frames and error checks); about a fifth of the host builds that ran like the
interpreter are also built with `--distributed=mpi` and run as 2 ranks (`mpirun -np 2`, when
Open MPI is installed), whose records and saved files, and those of `--interpret=scheduled
--ranks 2`, must be `--interpret --ranks 2`'s (with a
checkpoint and a resume of the 2 ranks where the program has a loop to checkpoint); every run may get `--seed S`,
`-fno-incrementalize` (sums over slices as written: running sums are the default) and
`-D T=<larger>`;
all must print the same bytes on stdout, write the same files (saves) and exit the same way.

-fno-blas keeps every matrix product the interpreter's sequential k loop, so the comparison is
byte for byte (dsl/README.md §7.7; BLAS would only be used for K·N ≥ 4096 anyway, far above the
generator's sizes).  When the interpreter stops with a run-time error (exit 1 after the checks
passed) the others must exit 1 with the same message (records may differ: a generated program
may print fewer before the error, dsl/README.md §7.7); a cuda-emu build's message may name
another failing point of the same operation (its numbers are not compared): a GPU reports
whichever point of a launch records first.

A finding is: a difference, exit 2 or "internal compiler error", a signal, a timeout, a crash of
the checks themselves, or a host build that fails.  Each goes to FINDINGS/seed-<N>/ (the program,
every command with its exit code, stdout and stderr) and the run exits 1.  Programs that the
checks reject (exit 1 from `trlc p.trl`) are counted and skipped.

Usage: diff_fuzz.py [--seconds S | --count N] [--seed-start K] [--jobs J] [--host-every M]
                    [--trlc PATH] [--findings DIR] [--work DIR] [--no-cxx-cache] [--no-host]
                    [--keep] [--dist-fraction F]
  --seed-start  first seed (default: from the clock, printed); seeds go K, K+1, ...
  --host-every  build and run the host program for every M-th program only (default 1)
A finding is rerun by hand with `gen_trl.py --seed N > p.trl` and the commands in its folder."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_trl  # noqa: E402

ICE_MARKERS = (b"internal compiler error", b"AddressSanitizer", b"runtime error:",
               b"Assertion", b"terminate called", b"Segmentation fault")


def run(cmd, cwd, timeout, env=None):
    """(rc, stdout, stderr, seconds); rc is 'timeout' when the command ran past timeout."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr, time.time() - t0
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", e.stderr or b"", time.time() - t0


def files_of(d):
    out = {}
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if os.path.isfile(path) and name.endswith((".npy", ".npz")):
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


def is_crash(rc, err):
    if rc == "timeout":
        return "timeout"
    if rc == 2:
        return "exit 2 (internal compiler error)"
    if rc < 0 or rc >= 128:
        return f"signal (exit {rc})"
    if any(m in err for m in ICE_MARKERS):
        return "internal error message on stderr"
    return None


def error_text(err):
    """The first 'error:' line without its path (run-time errors of interpreter and program)."""
    for line in err.decode(errors="replace").splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return ""


def runtime_bounds(help_text):
    """(NAME, least value, default) of each bound a generated program's --help says --bound may
    change (runtime/rt/trl_rt_common.cpp)."""
    out = []
    for line in help_text.decode(errors="replace").splitlines():
        m = re.match(r"\s+(\w+)\s+= (\d+)\s+\(--bound may change it(?:; at least (\d+))?\)", line)
        if m:
            out.append((m.group(1), int(m.group(3) or 1), int(m.group(2))))
    return out


def first_diff(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for k in range(max(len(al), len(bl))):
        x = al[k] if k < len(al) else b"<end>"
        y = bl[k] if k < len(bl) else b"<end>"
        if x != y:
            x, y = x.decode(errors="replace")[:200], y.decode(errors="replace")[:200]
            return f"line {k + 1}: {x} | {y}"
    return "(same lines)"


class Fuzzer:
    def __init__(self, a):
        self.a = a
        self.trlc = os.path.abspath(a.trlc)
        self.work = a.work or tempfile.mkdtemp(prefix="trlc-difffuzz-")
        os.makedirs(self.work, exist_ok=True)
        self.findings = os.path.abspath(a.findings)
        self.lock = threading.Lock()
        self.stats = {"programs": 0, "rejected": 0, "runtime_error": 0, "host_built": 0, "emu_built": 0,
                      "findings": 0, "lines": 0, "runtime_bound_runs": 0, "resumed_runs": 0,
                      "driver_errors": 0, "dist_runs": 0}
        self.mpirun = shutil.which("mpirun")
        if self.mpirun:  # Open MPI refuses root without these
            os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        self.reject_reasons = {}
        self.env = dict(os.environ)
        if not a.no_cxx_cache:
            self.env["TRLC_FUZZ_REAL_CXX"] = os.environ.get("CXX", "c++")
            self.env["TRLC_FUZZ_CXX_CACHE"] = os.path.join(self.work, "cxx-cache")
            self.env["CXX"] = os.path.join(HERE, "cxx_cached.py")

    def record(self, seed, d, why, logs):
        dest = os.path.join(self.findings, f"seed-{seed}")
        os.makedirs(dest, exist_ok=True)
        shutil.copy(os.path.join(d, "p.trl"), os.path.join(dest, "p.trl"))
        with open(os.path.join(dest, "finding.txt"), "w") as f:
            f.write(f"seed {seed}: {why}\n\n")
            for name, cmd, rc, out, err in logs:
                f.write(f"== {name}: {' '.join(cmd)}\n   exit {rc}\n")
                with open(os.path.join(dest, f"{name}.stdout"), "wb") as o:
                    o.write(out)
                with open(os.path.join(dest, f"{name}.stderr"), "wb") as o:
                    o.write(err)
        with self.lock:
            self.stats["findings"] += 1
            print(f"FINDING seed {seed}: {why} -> {dest}", flush=True)

    def one(self, seed, rng_choice):
        a = self.a
        d = os.path.join(self.work, f"seed-{seed}")
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "p.trl")
        with open(src, "w") as f:
            f.write(gen_trl.generate(seed))
        logs = []

        def step(name, cmd, cwd, timeout, env=None):
            os.makedirs(cwd, exist_ok=True)
            rc, out, err, _ = run(cmd, cwd, timeout, env)
            logs.append((name, cmd, rc, out, err))
            return rc, out, err

        flags = rng_choice["flags"]
        m = re.search(r"^dim t < T = (\d+)", open(src).read(), re.M)
        if rng_choice["bigger_t"] and m:  # larger bounds than written: constant reads stay valid
            flags = flags + ["-D", f"T={int(m.group(1)) + rng_choice['bigger_t']}"]
        rc, out, err = step("check", [self.trlc, src] + flags, d, a.timeout)
        crash = is_crash(rc, err)
        if crash:
            return self.record(seed, d, f"check: {crash}", logs)
        with self.lock:
            self.stats["programs"] += 1
        if rc != 0:
            why = error_text(err)[:60]
            with self.lock:
                self.stats["rejected"] += 1
                self.reject_reasons[why] = self.reject_reasons.get(why, 0) + 1
            return self.cleanup(d)
        variants = [("interpret", ["--interpret"]), ("scheduled", ["--interpret=scheduled"])]
        if rng_choice["novec"]:
            variants.append(("scheduled-novec", ["--interpret=scheduled", "-fno-vectorize"]))
        variants = [(n, v + flags) for n, v in variants]
        results = {}
        for name, vflags in variants:
            rc, out, err = step(name, [self.trlc, src] + vflags, os.path.join(d, name), a.timeout)
            crash = is_crash(rc, err)
            if crash:
                return self.record(seed, d, f"{name}: {crash}", logs)
            results[name] = (rc, out, err, files_of(os.path.join(d, name)))
        if rng_choice["host"]:
            opt = rng_choice["opt"]
            exe = os.path.join(d, "host", "p")
            os.makedirs(os.path.dirname(exe), exist_ok=True)
            target = "--target=cuda-emu" if rng_choice["emu"] else "--target=host"
            rc, out, err = step("build", [self.trlc, src, "-o", exe, target, "-fno-blas",
                                          opt] + flags + rng_choice["build_flags"], d,
                                a.build_timeout, self.env)
            crash = is_crash(rc, err)
            if crash or rc != 0:
                return self.record(seed, d, f"host build: {crash or f'exit {rc}'}", logs)
            with self.lock:
                self.stats["host_built"] += 1
                self.stats["emu_built"] += 1 if rng_choice["emu"] else 0
            run_flags = ["--quiet"] + (["--threads", "2"] if rng_choice["threads2"] else [])
            if "--seed" in flags:
                run_flags += ["--seed", flags[flags.index("--seed") + 1]]
            rc, out, err = step("host", [exe] + run_flags, os.path.join(d, "host"), a.timeout)
            bad = self.host_failure(rc, err)
            if bad:
                return self.record(seed, d, f"host program: {bad}", logs)
            results["host"] = (rc, out, err, files_of(os.path.join(d, "host")))
            rc, hout, herr = step("help", [exe, "--help"], os.path.join(d, "host"), a.timeout)
            if results["host"][0] == 0 and b"--checkpoint FILE" in hout:
                why = self.resume_check(step, exe, run_flags, os.path.join(d, "host-resume"), results["host"],
                                        rng_choice["ckpt_every"])
                if why:
                    return self.record(seed, d, why, logs)
            # a bound the program may change at run time: --bound NAME=V against -D NAME=V
            out = hout
            for name, lo, dflt in runtime_bounds(out):
                v = max(lo, dflt + rng_choice["bound_delta"])
                if v == dflt:
                    continue
                hd = os.path.join(d, f"host-{name}")
                rc, hout, herr = step(f"host-{name}",
                                      [exe] + run_flags + ["--bound", f"{name}={v}"], hd, a.timeout)
                bad = self.host_failure(rc, herr)
                if bad:
                    return self.record(seed, d, f"host program --bound {name}={v}: {bad}", logs)
                idir = os.path.join(d, f"interpret-{name}")
                others = [x for k, x in enumerate(flags)  # this -D replaces the compiled one
                          if not (x.startswith(f"{name}=") and k and flags[k - 1] == "-D")
                          and not (x == "-D" and k + 1 < len(flags)
                                   and flags[k + 1].startswith(f"{name}="))]
                icmd = [self.trlc, src, "--interpret", "-D", f"{name}={v}"] + others
                irc, iout, ierr = step(f"interpret-{name}", icmd, idir, a.timeout)
                crash = is_crash(irc, ierr)
                if crash:
                    return self.record(seed, d, f"interpret -D {name}={v}: {crash}", logs)
                if (irc, iout, files_of(idir)) != (rc, hout, files_of(hd)) and irc == 0:
                    return self.record(seed, d, f"host program --bound {name}={v} differs from "
                                       f"--interpret -D {name}={v}: exit {rc} vs {irc}, "
                                       f"{first_diff(iout, hout)}", logs)
                with self.lock:
                    self.stats["runtime_bound_runs"] += 1
        ref = results["interpret"]
        if ref[0] != 0:  # a run-time error: the same exit and message everywhere
            with self.lock:
                self.stats["runtime_error"] += 1
            def message(name, err):  # cuda-emu: the point's numbers may be another's
                t = error_text(err)
                return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", t.split(": error: ", 1)[-1]) + \
                    t.split(": error: ", 1)[0] if name == "host" and rng_choice["emu"] else t
            for name, r in results.items():
                if r[0] != ref[0] or message(name, r[2]) != message(name, ref[2]):
                    return self.record(seed, d, f"{name}: run-time error differs: exit {r[0]} "
                                       f"'{error_text(r[2])}' vs interpret exit {ref[0]} "
                                       f"'{error_text(ref[2])}'", logs)
            return self.cleanup(d)
        for name, r in results.items():
            if r[0] != ref[0]:
                return self.record(seed, d, f"{name}: exit {r[0]} vs interpret exit 0: "
                                   f"{error_text(r[2])}", logs)
            if r[1] != ref[1]:
                return self.record(seed, d, f"{name}: stdout differs, {first_diff(ref[1], r[1])}",
                                   logs)
            if r[3] != ref[3]:
                return self.record(seed, d, f"{name}: saved files differ "
                                   f"({sorted(r[3])} vs {sorted(ref[3])})", logs)
        with self.lock:
            self.stats["lines"] += ref[1].count(b"\n")
        if rng_choice["dist"] and self.mpirun:
            why = self.dist_check(step, src, flags, d, rng_choice)
            if why:
                return self.record(seed, d, why, logs)
        return self.cleanup(d)

    def dist_check(self, step, src, flags, d, rng_choice):
        """The program as 2 data-parallel ranks (dsl/README.md §7.12): `--interpret --ranks 2`
        against the host build with --distributed=mpi under `mpirun -np 2`, records and saved
        files byte for byte; then a checkpoint and resume of the 2 ranks where the program has
        a loop to checkpoint.  Returns a finding or None."""
        a = self.a
        rd = os.path.join(d, "ranks2")
        rc, out, err = step("interpret-ranks2", [self.trlc, src, "--interpret", "--ranks", "2"] + flags, rd, a.timeout)
        crash = is_crash(rc, err)
        if crash:
            return f"interpret --ranks 2: {crash}"
        if rc != 0:  # a run-time error: the ranks' builds are not compared
            return None
        ref = (rc, out, files_of(rd))
        sd = os.path.join(d, "sched-ranks2")  # the same ranks through the schedule and memory plan
        rc, out, err = step("scheduled-ranks2", [self.trlc, src, "--interpret=scheduled", "--ranks", "2"] + flags, sd,
                            a.timeout)
        if is_crash(rc, err) or rc != 0:
            return f"interpret=scheduled --ranks 2: {is_crash(rc, err) or f'exit {rc}: {error_text(err)}'}"
        if out != ref[1]:
            return f"interpret=scheduled --ranks 2: stdout differs from --interpret --ranks 2, {first_diff(ref[1], out)}"
        if files_of(sd) != ref[2]:
            return "interpret=scheduled --ranks 2: saved files differ from --interpret --ranks 2's"
        exe = os.path.join(d, "dist", "p")
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        rc, out, err = step("dist-build", [self.trlc, src, "-o", exe, "--target=host", "-fno-blas", "--distributed=mpi",
                                           rng_choice["opt"]] + flags + rng_choice["build_flags"], d,
                            a.build_timeout, self.env)
        crash = is_crash(rc, err)
        if crash or rc != 0:
            return f"--distributed=mpi build: {crash or f'exit {rc}: {error_text(err)}'}"
        launch = [self.mpirun, "--oversubscribe", "-np", "2"]
        run_flags = ["--quiet"]
        if "--seed" in flags:
            run_flags += ["--seed", flags[flags.index("--seed") + 1]]
        rc, out, err = step("dist", launch + [exe] + run_flags, os.path.join(d, "dist"), a.timeout)
        if rc != 0:
            return f"mpirun -np 2 of the --distributed=mpi build: exit {rc}: {error_text(err)}"
        if out != ref[1]:
            return f"mpirun -np 2: stdout differs from --interpret --ranks 2, {first_diff(ref[1], out)}"
        if files_of(os.path.join(d, "dist")) != ref[2]:
            return "mpirun -np 2: saved files differ from --interpret --ranks 2's"
        with self.lock:
            self.stats["dist_runs"] += 1
        rc, hout, herr = step("dist-help", [exe, "--help"], os.path.join(d, "dist"), a.timeout)
        if rc == 0 and b"--checkpoint FILE" in hout:
            return self.resume_check(step, exe, run_flags, os.path.join(d, "dist-resume"), (0, ref[1], b"", ref[2]),
                                     rng_choice["ckpt_every"], launch)
        return None

    def resume_check(self, step, exe, run_flags, rd, ref, every, launch=()):
        """A run writing checkpoints every "every" iterations, then a run resuming the last one:
        the log and the saved files must be the plain run's ("ref").  "launch": the command that
        starts the program (mpirun -np 2 for the ranks of a --distributed build).  Returns a
        finding or None."""
        ck = ["--log", "l.jsonl", "--checkpoint", "ck.bin"]
        exe = list(launch) + [exe]
        rc, out, err = step("checkpoint", exe + run_flags + ck + ["--checkpoint-every", str(every)], rd,
                            self.a.timeout)
        bad = self.host_failure(rc, err)
        if bad or rc != 0:
            return f"host program --checkpoint-every {every}: {bad or f'exit {rc}: {error_text(err)}'}"
        # Saved files stay: one written in an iteration the checkpoint holds is not written again.
        rc, out, err = step("resume", exe + run_flags + ck + ["--resume"], rd, self.a.timeout)
        bad = self.host_failure(rc, err)
        if bad or rc != 0:
            return f"host program --resume: {bad or f'exit {rc}: {error_text(err)}'}"
        with open(os.path.join(rd, "l.jsonl"), "rb") as f:
            log = f.read()
        if log != ref[1]:
            return f"host program resumed (--checkpoint-every {every}): log differs, {first_diff(ref[1], log)}"
        if files_of(rd) != ref[3]:
            return f"host program resumed (--checkpoint-every {every}): saved files differ"
        with self.lock:
            self.stats["resumed_runs"] += 1
        return None

    @staticmethod
    def host_failure(rc, err):
        if rc == "timeout":
            return "timeout"
        if rc < 0 or rc >= 128 or b"runtime error:" in err or b"AddressSanitizer" in err:
            return f"signal or sanitizer report (exit {rc})"
        return None

    def cleanup(self, d):
        if not self.a.keep:
            shutil.rmtree(d, ignore_errors=True)

    def choices(self, seed, k):
        import random
        r = random.Random(seed ^ 0x5EED)
        flags = []
        if r.random() < 0.3:
            flags += ["--seed", str(r.randrange(1 << 32))]
        if r.random() < 0.4:  # sums over slices as written, not running sums (dsl/README.md §10.1)
            flags += ["-fno-incrementalize"]
        host = k % self.a.host_every == 0 and not self.a.no_host
        return {"novec": r.random() < 0.3, "host": host, "emu": host and r.random() < 0.35,
                "opt": r.choice(["-O0", "-O0", "-O1", "-O2"]), "threads2": r.random() < 0.3,
                "flags": flags, "bigger_t": r.choice([1, 2, 5]) if r.random() < 0.15 else 0,
                "build_flags": [f for f, p in (("-fno-fuse", 0.2), ("-fno-vectorize", 0.2))
                                if r.random() < p],
                "bound_delta": r.choice([-1, 1, 2, 5]), "ckpt_every": r.choice([1, 2, 3, 5]),
                "dist": host and r.random() < self.a.dist_fraction}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--count", type=int)
    ap.add_argument("--seed-start", type=int)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--host-every", type=int, default=1)
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--findings", default=os.path.join(ROOT, "build-difffuzz", "findings"))
    ap.add_argument("--work")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds per trlc run or program run")
    ap.add_argument("--build-timeout", type=float, default=600)
    ap.add_argument("--no-cxx-cache", action="store_true")
    ap.add_argument("--no-host", action="store_true", help="interpreters only, no host builds")
    ap.add_argument("--dist-fraction", type=float, default=0.2,
                    help="share of the host builds also run as 2 ranks (--distributed=mpi, mpirun -np 2)")
    ap.add_argument("--keep", action="store_true", help="keep every program's folder")
    a = ap.parse_args()
    if a.seconds is None and a.count is None:
        a.seconds = 60
    if a.seed_start is None:
        a.seed_start = int(time.time()) % 1000000 * 1000
    f = Fuzzer(a)
    print(f"diff_fuzz: trlc {f.trlc}, seeds from {a.seed_start}, work {f.work}", flush=True)
    t0 = time.time()
    seeds = iter(range(a.seed_start, a.seed_start + (a.count or 10 ** 9)))
    next_lock = threading.Lock()
    done = [0]
    processed = []

    def worker():
        while True:
            if a.seconds is not None and time.time() - t0 >= a.seconds:
                return
            with next_lock:
                seed = next(seeds, None)
                k = done[0]
                done[0] += 1
            if seed is None:
                return
            with next_lock:
                processed.append(seed)
            try:
                f.one(seed, f.choices(seed, k))
            except Exception:  # a bug of this driver: say so, and fail the run
                with f.lock:
                    f.stats["driver_errors"] += 1
                print(f"DRIVER ERROR seed {seed}:\n{traceback.format_exc()}", flush=True)

    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for _ in range(a.jobs):
            pool.submit(worker)
    s = f.stats
    last = max(processed) if processed else a.seed_start
    n = s["programs"]
    frac = s["rejected"] / n if n else 0.0
    print(f"diff_fuzz: {n} programs (seeds {a.seed_start}..{last}) in {time.time() - t0:.0f} s: "
          f"{s['rejected']} rejected by the checks ({100 * frac:.1f} %), "
          f"{s['runtime_error']} stopped by a run-time error, {s['host_built']} host builds ({s['emu_built']} cuda-emu), "
          f"{s['lines']} records compared, {s['runtime_bound_runs']} runs with --bound, "
          f"{s['resumed_runs']} resumed from a checkpoint, {s['dist_runs']} runs as 2 ranks, "
          f"{s['findings']} findings", flush=True)
    for why, c in sorted(f.reject_reasons.items(), key=lambda x: -x[1])[:10]:
        print(f"  rejected {c}x: {why}")
    if not a.work and not a.keep:
        shutil.rmtree(f.work, ignore_errors=True)
    sys.exit(1 if s["findings"] or s["driver_errors"] else 0)


if __name__ == "__main__":
    main()
