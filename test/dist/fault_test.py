#!/usr/bin/env python3
"""fault_test.py — one rank of a data-parallel run dies; the others must not hang (issue 21: every
other rank exits non-zero within 30 s, and the message names the rank).

    fault_test.py [--abort] MPIEXEC [MPIEXEC_FLAGS...] -- PROGRAM RANKS VICTIM

Starts `MPIEXEC -n RANKS MPIEXEC_FLAGS PROGRAM DIR 120` (test/dist/fault_test.cpp: the ranks
allgather in a loop through runtime/rt/trl_dist_mpi.cpp), waits until every rank has written
its pid, lets them run 0.5 s, then kills rank VICTIM with SIGKILL (with --abort the victim calls
the layer's abort(3) itself instead, nothing is killed).  Checks: mpiexec exits non-zero within
30 s of the kill, its output names "rank VICTIM", and no rank's process is left.  Prints the
time, the exit status and the message; exits 1 when a check fails.  ctest runs it
(dist_fault_kill, dist_fault_abort; test/CMakeLists.txt).
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

LIMIT_S = 30.0


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie has exited already
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def main():
    args = sys.argv[1:]
    abort = args[:1] == ["--abort"]
    if abort:
        args = args[1:]
    sep = args.index("--")
    launcher, (program, ranks, victim) = args[:sep], args[sep + 1:]
    ranks, victim = int(ranks), int(victim)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory() as d:
        cmd = [launcher[0], "-n", str(ranks)] + launcher[1:] + [program, d, "120"]
        if abort:
            cmd.append(str(victim))
        out = open(os.path.join(d, "out.txt"), "w+")
        t_start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        pids = {}
        while len(pids) < ranks:
            if proc.poll() is not None or time.monotonic() - t_start > 60:
                out.seek(0)
                print(f"fault_test: the ranks did not start (exit {proc.poll()}):\n{out.read()}")
                proc.kill()
                return 1
            for r in range(ranks):
                p = os.path.join(d, f"rank-{r}.pid")
                if r not in pids and os.path.exists(p):
                    pids[r] = int(open(p).read())
            time.sleep(0.05)
        if not abort:
            time.sleep(0.5)
            os.kill(pids[victim], signal.SIGKILL)
        t0 = time.monotonic()
        try:
            rc = proc.wait(timeout=LIMIT_S + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = None
        elapsed = time.monotonic() - t0
        out.seek(0)
        text = out.read()
        left = [r for r, pid in pids.items() if r != victim and alive(pid)]
        for _ in range(50):  # mpiexec has exited; its children may take a moment to be reaped
            if not left:
                break
            time.sleep(0.1)
            left = [r for r in left if alive(pids[r])]
        what = "abort(3) on" if abort else "SIGKILL to"
        lines = [l.strip() for l in text.splitlines() if re.search(r"\brank\b", l)]
        print(f"fault_test: {what} rank {victim} of {ranks}: mpiexec exited {rc} after {elapsed:.2f} s; "
              f"ranks left: {left or 'none'}")
        for l in lines:
            print(f"  {l}")
        failures = []
        if rc is None or rc == 0:
            failures.append(f"mpiexec exit status {rc}, expected non-zero")
        if elapsed > LIMIT_S:
            failures.append(f"{elapsed:.1f} s after the failure, more than {LIMIT_S:.0f} s")
        if not re.search(rf"\brank {victim}\b", text):
            failures.append(f"no message names rank {victim}; output:\n{text}")
        if left:
            failures.append(f"ranks {left} still run")
            for r in left:
                os.kill(pids[r], signal.SIGKILL)
        for f in failures:
            print(f"fault_test: FAILED: {f}")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
