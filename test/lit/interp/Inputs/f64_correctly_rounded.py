"""f64_correctly_rounded.py < RECORDS — check the f64 transcendentals that `trlc --interpret`
printed for test/lit/codegen/Inputs/transcendentals.trl against mpmath at 300 bits, rounded to
the nearest double by exact rational arithmetic (Python's int / int division rounds correctly):
exp, log, tanh, sin, cos and ** must be the correctly rounded doubles (runtime/trl_math_f64.h,
trl_math_trig.h), element for element.  Prints "checked: N values, M records" or one
"WRONG: field[i][j] x=… got … want …" line per mismatch, exit 1."""
import json
import sys
from fractions import Fraction

import mpmath

mpmath.mp.prec = 300


def nearest(v):
    """The double nearest to the mpmath value v (ties to even), through an exact Fraction."""
    sign, man, exp, _ = v._mpf_  # v = (-1)^sign · man · 2^exp
    f = Fraction(man) * (Fraction(2) ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)
    return float(-f if sign else f)


FNS = {
    "e": lambda x, p: mpmath.exp(x),
    "l": lambda x, p: mpmath.log(p),
    "th": lambda x, p: mpmath.tanh(x),
    "s": lambda x, p: mpmath.sin(x),
    "c": lambda x, p: mpmath.cos(x),
    "pw": lambda x, p: mpmath.power(p, x),
    "sq": lambda x, p: x * x,
}
count = records = 0
bad = []
for line in sys.stdin:
    rec = json.loads(line)
    if "x" not in rec or "p" not in rec:
        continue
    records += 1
    for key, fn in FNS.items():
        for i, row in enumerate(rec[key]):
            for j, got in enumerate(row):
                x, p = rec["x"][i][j], rec["p"][i][j]
                want = nearest(fn(mpmath.mpf(x), mpmath.mpf(p)))
                count += 1
                if got != want:
                    bad.append(f"WRONG: {key}[{i}][{j}] x={x!r} p={p!r} got {got!r} want {want!r}")
print("\n".join(bad))
print(f"checked: {count} values, {records} records")
sys.exit(1 if bad or records == 0 else 0)
