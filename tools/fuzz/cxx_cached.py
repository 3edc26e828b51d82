#!/usr/bin/env python3
"""cxx_cached.py ARGS... — a stand-in for $CXX under `trlc -o` in the differential fuzzer: the
same command, except that the runtime's .cpp sources (the arguments after `-x none` that end in
.cpp) are compiled once per set of flags into object files kept in $TRLC_FUZZ_CXX_CACHE and
linked from there.  The generated .cu is compiled exactly as trlc asks; the runtime objects are
built with the same flags (standard, -O level, OpenMP, -ffp-contract=off, -I).
This keeps the fuzzer's host builds at the cost of the generated program alone (the runtime is
about 4/5 of a small program's build time at -O0).  The real compiler is
$TRLC_FUZZ_REAL_CXX (default c++)."""
import hashlib
import os
import subprocess
import sys


def main():
    real = os.environ.get("TRLC_FUZZ_REAL_CXX", "c++")
    cache = os.environ.get("TRLC_FUZZ_CXX_CACHE")
    args = sys.argv[1:]
    if not cache or "-x" not in args:
        os.execvp(real, [real] + args)
    # the flags that shape code generation (everything but sources, -o, -x, libraries)
    flags, sources, k = [], [], 0
    after_none = False
    out = []
    while k < len(args):
        a = args[k]
        if a == "-x":
            after_none = args[k + 1] == "none"
            out += [a, args[k + 1]]
            k += 2
            continue
        if a == "-o":
            out += [a, args[k + 1]]
            k += 2
            continue
        if after_none and a.endswith(".cpp"):
            sources.append((len(out), a))
            out.append(a)
        else:
            out.append(a)
            if a.startswith("-") and not a.startswith("-l") and a != "-":
                flags.append(a)
        k += 1
    os.makedirs(cache, exist_ok=True)
    for pos, src in sources:
        with open(src, "rb") as f:
            content = f.read()
        h = hashlib.sha256("\0".join(flags + [os.path.abspath(src)]).encode() + content)
        obj = os.path.join(cache, h.hexdigest()[:24] + ".o")
        if not os.path.exists(obj):
            tmp = f"{obj}.{os.getpid()}.tmp"
            r = subprocess.run([real] + flags + ["-c", src, "-o", tmp])
            if r.returncode != 0:
                sys.exit(r.returncode)
            os.replace(tmp, obj)
        out[pos] = obj
    os.execvp(real, [real] + out)


if __name__ == "__main__":
    main()
