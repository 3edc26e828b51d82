#!/usr/bin/env python3
"""run_random — the scheduled-interpreter property test: on random programs
(gen_programs.py), `trlc --interpret=scheduled` (with and without -fno-vectorize) must print
exactly the bytes `trlc --interpret` prints, and exit the same way.

Usage: run_random.py TRLC SEED N WORKDIR [-jJOBS]   (JOBS programs at once; default 2)
Prints one line per failing program (its path, the variant and why), then the summary
`N passed, M failed`; exits 1 when any failed.  Programs live in WORKDIR/prog_<k>.trl, so a
failure can be rerun by hand."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = [["--interpret=scheduled"], ["--interpret=scheduled", "-fno-vectorize"]]


def run(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b"timed out after 60 s"


def first_diff(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for k in range(max(len(al), len(bl))):
        x = al[k] if k < len(al) else b"<end>"
        y = bl[k] if k < len(bl) else b"<end>"
        if x != y:
            return f"line {k + 1}: point-wise {x.decode(errors='replace')} | scheduled {y.decode(errors='replace')}"
    return "?"


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: run_random.py TRLC SEED N WORKDIR")
    trlc, seed, n, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    subprocess.run([sys.executable, os.path.join(HERE, "gen_programs.py"), str(seed), str(n), work],
                   check=True)
    jobs = 2
    for a in sys.argv[5:]:
        if a.startswith("-j"):
            jobs = max(1, int(a[2:]))

    def check(k):
        """None when program k passes, else why it fails."""
        path = os.path.join(work, f"prog_{k}.trl")
        rc0, out0, err0 = run([trlc, path, "--interpret"])
        if rc0 != 0:
            msg = err0.decode(errors="replace").strip().splitlines()
            return f"{path}: the point-wise interpreter fails (exit {rc0}): {msg[0] if msg else ''}"
        for v in VARIANTS:
            rc, out, err = run([trlc, path] + v)
            if rc != rc0:
                msg = err.decode(errors="replace").strip().splitlines()
                return f"{path}: {' '.join(v)}: exit {rc}: {msg[0] if msg else ''}"
            if out != out0:
                return f"{path}: {' '.join(v)}: output differs, {first_diff(out0, out)}"
        return None

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(check, range(n)))
    failed = [r for r in results if r is not None]
    passed = n - len(failed)
    for f in failed:
        print("FAIL", f)
    print(f"{passed} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
