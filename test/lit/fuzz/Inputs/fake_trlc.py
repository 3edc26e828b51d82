#!/usr/bin/env python3
"""fake_trlc.py ARGS... — the real trlc ($FAKE_REAL_TRLC) with one injected fault, chosen by
$FAKE_FAULT, so that tests can check that diff_fuzz.py reports what it must:
  scheduled-diff   --interpret=scheduled prints one extra record
  scheduled-ice    --interpret=scheduled exits 2 with "internal compiler error"
  check-signal     the plain check (no --interpret/-o/--emit) dies on SIGSEGV"""
import os
import signal
import subprocess
import sys

real = os.environ["FAKE_REAL_TRLC"]
fault = os.environ.get("FAKE_FAULT", "")
args = sys.argv[1:]
if fault == "check-signal" and not any(a.startswith(("--interpret", "-o", "--emit")) for a in args):
    os.kill(os.getpid(), signal.SIGSEGV)
if fault == "scheduled-ice" and "--interpret=scheduled" in args:
    sys.stderr.write("trlc: internal compiler error: injected\n")
    sys.exit(2)
p = subprocess.run([real] + args)
if fault == "scheduled-diff" and "--interpret=scheduled" in args:
    sys.stdout.write('{"injected":1}\n')
sys.exit(p.returncode)
