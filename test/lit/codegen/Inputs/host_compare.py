"""host_compare.py [--errors] [--emu] [-fFLAG...] TRLC RUNTIME_DIR CXX PROGRAM.trl... — build each program for the
host from `trlc --emit=cuda` (runtime compiled once) and run it; compare with `trlc --interpret`
run in its own directory: stdout bytes, exit code, and every file either writes (saves).  Prints
"same: NAME (L lines, F files)" per program, or "DIFF: NAME: reason" and exits 1 at the end.
With --errors (programs that fail at run time): compares the exit code and the first line of
stderr (the interpreter's "path:line:col: error: message"), and prints "same error: NAME: E",
E being that line without the path.  With --emu: the CUDA semantics on the host (TRL_CUDA_EMU,
runtime/trl_rt.h: every thread of a launch's grid a task, in shuffled order, over two threads;
device frames; errors checked at the host's next look) under ThreadSanitizer, whose report
on stderr is a DIFF.  -fFLAG arguments go to trlc --emit=cuda (-fno-blas: products as loops)."""
import os
import subprocess
import sys
import tempfile

args = sys.argv[1:]
errors = "--errors" in args
emu = "--emu" in args
codegen_flags = [a for a in args if a.startswith("-f")]  # to trlc --emit=cuda, e.g. -fno-blas
args = [a for a in args if a not in ("--errors", "--emu") and not a.startswith("-f")]
tsan = ["-fsanitize=thread", "-g"] if emu else []
trlc, runtime, cxx = os.path.abspath(args[0]), args[1], args[2]
programs = args[3:]
work = tempfile.mkdtemp(prefix="trlc-host-compare-")
objs = []
for src in ["rt/trl_rt_host.cpp", "rt/trl_rt_common.cpp", "rt/trl_checkpoint.cpp", "rt/trl_profile.cpp", "rt/trl_dist.cpp", "trl_npy.cpp", "trl_json.cpp"]:
    obj = os.path.join(work, os.path.basename(src) + ".o")
    subprocess.run([cxx, "-std=c++17", "-O1", "-fopenmp"] + tsan + ["-I", runtime, "-c",
                    os.path.join(runtime, src), "-o", obj], check=True)
    objs.append(obj)


def run_in(directory, cmd):
    os.makedirs(directory, exist_ok=True)
    p = subprocess.run(cmd, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if b"ThreadSanitizer" in p.stderr:
        return "ThreadSanitizer", p.stderr.decode(errors="replace")[:2000]
    if errors:
        first = p.stderr.decode(errors="replace").split("\n")[0]
        return p.returncode, first
    files = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path) and not name.startswith("prog"):
            with open(path, "rb") as f:
                files[name] = f.read()
    return p.returncode, p.stdout, files


failed = False
for prog in programs:
    name = os.path.basename(prog)
    d = os.path.join(work, name)
    os.makedirs(d)
    cu = os.path.join(d, "prog.cu")
    with open(cu, "wb") as f:
        r = subprocess.run([trlc, os.path.abspath(prog), "--emit=cuda"] + codegen_flags, stdout=f)
    if r.returncode != 0:
        print(f"DIFF: {name}: --emit=cuda exited with {r.returncode}")
        failed = True
        continue
    exe = os.path.join(d, "gen", "prog")
    os.makedirs(os.path.dirname(exe))
    subprocess.run([cxx, "-std=c++17", "-O1", "-fopenmp"] + tsan + (["-DTRL_CUDA_EMU"] if emu else []) +
                   ["-I", runtime, "-x", "c++", cu, "-x", "none"] + objs + ["-lopenblas", "-o", exe], check=True)
    g = run_in(os.path.join(d, "gen"), [exe, "--quiet"] + (["--threads", "2"] if emu else []))
    if g[0] == "ThreadSanitizer":
        print(f"DIFF: {name}: ThreadSanitizer report\n{g[1]}")
        failed = True
        continue
    i = run_in(os.path.join(d, "interp"), [trlc, os.path.abspath(prog), "--interpret"])
    if errors:
        if g != i or g[0] == 0:
            print(f"DIFF: {name}: generated exit {g[0]} {g[1]!r}, interpreter exit {i[0]} {i[1]!r}")
            failed = True
        else:
            print(f"same error: {name}: exit {g[0]}: {g[1].split(': ', 1)[1]}")
        continue
    if g != i:
        what = "exit code" if g[0] != i[0] else "stdout" if g[1] != i[1] else "saved files"
        print(f"DIFF: {name}: {what} (generated exit {g[0]}, interpreter exit {i[0]})")
        failed = True
        continue
    lines = g[1].count(b"\n")
    print(f"same: {name} ({lines} lines, {len(g[2])} files)")
sys.exit(1 if failed else 0)
