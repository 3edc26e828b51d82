"""no_libm.py TRLC RUNTIME_DIR CXX PROGRAM.trl... — compile each program's generated source
(`trlc --emit=cuda`) for the host to an object file (-c: the generated code and the runtime's
headers, none of the runtime's .cpp files) and list the C library functions it imports (nm -u).
Issue 18 point 5: every transcendental comes from runtime/trl_math*.h, compiled for the
interpreter, the host and the device alike, so no generated program may import libm's exp, log,
sin, cos, pow, tanh, … (libm's sqrt, fabs, floor, ceil and fmod are exact in IEEE 754 and stay
allowed).  Prints "clean: NAME (K imports)" per program or "LIBM: NAME: SYMBOL…", and exits 1 if
any program imports one.  The check is on symbols, not on source text, so a call that reaches libm
through a macro, a template or a header is found too."""
import os
import re
import subprocess
import sys
import tempfile

trlc, runtime, cxx = sys.argv[1:4]
programs = sys.argv[4:]
# libm's transcendental entry points (C99 §7.12 and glibc's aliases), in double, float and long
# double: sin, sinf, sinl, __sin_finite, ...
BASES = ["exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos", "tan",
         "sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "erf", "erfc", "lgamma", "tgamma", "cbrt", "hypot"]
PATTERN = re.compile(r"^(__)?(" + "|".join(BASES) + r")(f|l)?(_finite)?(@.*)?$")
work = tempfile.mkdtemp(prefix="trlc-no-libm-")
failed = False
for path in programs:
    name = os.path.basename(path)
    cu = os.path.join(work, name + ".cu")
    with open(cu, "wb") as f:
        subprocess.run([trlc, path, "--emit=cuda"], stdout=f, check=True)
    obj = cu + ".o"
    subprocess.run([cxx, "-std=c++17", "-O2", "-fopenmp", "-ffp-contract=off", "-I", runtime, "-x", "c++", "-c", cu,
                    "-o", obj], check=True)
    nm = subprocess.run(["nm", "-u", obj], stdout=subprocess.PIPE, check=True, text=True).stdout
    syms = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    bad = sorted(s for s in syms if PATTERN.match(s))
    if bad:
        failed = True
        print(f"LIBM: {name}: {' '.join(bad)}")
    else:
        print(f"clean: {name} ({len(syms)} imports)")
sys.exit(1 if failed else 0)
