"""sync_count.py CXX RUNTIME_DIR PROG.cu PROG.trl — how often a generated program's host waits
for the device (issue 18 point 3).  Preprocesses PROG.cu as the device build's host code sees
it (TRL_CUDA_EMU: the device's launch and check macros, with the host compiler) and counts, in
run_program, the launch sites and, after the macros are expanded, the places the host waits for
the device (trlg_flush: the staged emit records and the error record copied to the host) and
the host build's error checks (trlg_check).  Prints
    launch sites: N
    emit launch sites: E    (emit kernels staging their records on the device)
    device waits: M
    host error checks: H   (the host build checks after every launch: a load, not a wait)
    saves in the .trl: S
The device waits only where the host looks anyway: before a save's copies, at the end of each
iteration of the outermost loop, and at the end, so M must be S + 2; no launch, and no emit, may
be followed by a wait of its own."""
import re
import subprocess
import sys

cxx, runtime, cu, trl = sys.argv[1:5]
src = open(cu).read()


def checks(defines, call):
    """Calls of "call" in run_program once the macros are expanded with "defines"."""
    pre = subprocess.run([cxx, "-std=c++17", "-E", "-P"] + defines + ["-I", runtime, "-x", "c++", "-"],
                         input=src, capture_output=True, text=True, check=True).stdout
    body = pre[pre.index("static void run_program(trl_ctx *ctx)"):]
    body = body[:body.index("\nint main(")] if "\nint main(" in body else body
    return len(re.findall(call + r"\(ctx, arena\)", body))


launch_sites = len(re.findall(r"\bTRL_LAUNCH(?:_ROWS)?\(", src[src.index("static void run_program"):]))
print(f"launch sites: {launch_sites}")
print(f"emit launch sites: {len(re.findall(r'TRLG_EMIT_LAUNCH[(]', src[src.index('static void run_program'):]))}")
print(f"device waits: {checks(['-DTRL_CUDA_EMU'], 'trlg_flush')}")
print(f"host error checks: {checks([], 'trlg_check')}")
saves = len(re.findall(r"^save\b", open(trl).read(), re.M))
print(f"saves in the .trl: {saves}")
