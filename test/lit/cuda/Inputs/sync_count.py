"""sync_count.py CXX RUNTIME_DIR PROG.cu PROG.trl — how often a generated program's host waits
for the device (issue 18 point 3).  Preprocesses PROG.cu as the device build's host code sees
it (TRL_CUDA_EMU: the device's launch and check macros, with the host compiler) and counts, in
run_program, the launch sites and the error-record checks (trlg_check, a copy that waits for
the GPU) after the macros are expanded.  Prints
    launch sites: N
    device error checks: M
    host error checks: H   (the host build checks after every launch: a load, not a wait)
    emits and saves in the .trl: K
The device checks only where the host looks anyway: before an emit's or save's copies, at the
end of each iteration of the outermost loop, and at the end, so M must be K + 2 and no launch
may be followed by a check of its own."""
import re
import subprocess
import sys

cxx, runtime, cu, trl = sys.argv[1:5]
src = open(cu).read()


def checks(defines):
    """trlg_check calls in run_program once the macros are expanded with "defines"."""
    pre = subprocess.run([cxx, "-std=c++17", "-E", "-P"] + defines + ["-I", runtime, "-x", "c++", "-"],
                         input=src, capture_output=True, text=True, check=True).stdout
    body = pre[pre.index("static void run_program(trl_ctx *ctx)"):]
    body = body[:body.index("\nint main(")] if "\nint main(" in body else body
    return len(re.findall(r"trlg_check\(ctx, arena\)", body))


launch_sites = len(re.findall(r"\bTRL_LAUNCH(?:_ROWS)?\(", src[src.index("static void run_program"):]))
print(f"launch sites: {launch_sites}")
print(f"device error checks: {checks(['-DTRL_CUDA_EMU'])}")
print(f"host error checks: {checks([])}")
outputs = len(re.findall(r"^(emit|save)\b", open(trl).read(), re.M))
print(f"emits and saves in the .trl: {outputs}")
