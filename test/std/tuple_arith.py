"""Tuple (pytree) arithmetic (dsl/README.md §9.1) through `trlc --interpret` against numpy, in
f64: +, -, *, / and comparisons bit for bit, libm functions within 1e-15 relative.
Usage: tuple_arith.py TRLC"""
import sys

import numpy as np

from trl_harness import Checker, run

trlc = sys.argv[1]
rng = np.random.default_rng(0)
a, a2 = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
b, b2 = rng.normal(size=4), rng.normal(size=4)
c, c2 = rng.normal(size=2), rng.normal(size=2)
x32 = rng.normal(size=5).astype(np.float32)
ck = Checker()

body = """
p = (a, (b, c))
q = (a2, (b2, c2))
s = p + q
d = p - 2.0 * q
m = p * q / (1.5 + q * q)
n = -p
e = exp(p)
w = where(true, p, q)
wf = where(false, p, q)
cl = clamp(p, -0.5, 0.5)
mx = max(p, q)
po = p ** 2
gt = p > q
tot = sum(p)
tot2 = sum((x32, a))
tot3 = sum((x32, x32))
z = zeros_like(p)
o = ones_like((x32, 1))
c32 = f32(p)
"""
leaves = lambda t: [f"{t}[0]", f"{t}[1][0]", f"{t}[1][1]"]
outs = []
for t in ["s", "d", "m", "n", "e", "w", "wf", "cl", "mx", "po", "gt", "z", "c32"]:
    outs += leaves(t)
outs += ["tot", "tot2", "tot3", "o[0]", "o[1]"]
inputs = dict(a=a, b=b, c=c, a2=a2, b2=b2, c2=c2, x32=x32)
r = iter(run(trlc, body, inputs, outs))
P, Q = [a, b, c], [a2, b2, c2]
want = {
    "s": [x + y for x, y in zip(P, Q)],
    "d": [x - 2.0 * y for x, y in zip(P, Q)],
    "m": [x * y / (1.5 + y * y) for x, y in zip(P, Q)],
    "n": [-x for x in P],
    "w": P,
    "wf": Q,
    "cl": [np.minimum(np.maximum(x, -0.5), 0.5) for x in P],
    "mx": [np.maximum(x, y) for x, y in zip(P, Q)],
    "po": [x ** 2 for x in P],
    "gt": [x > y for x, y in zip(P, Q)],
    "z": [np.zeros_like(x) for x in P],
    "c32": [x.astype(np.float32) for x in P],
}
for t in ["s", "d", "m", "n"]:
    for k, want_leaf in enumerate(want[t]):
        ck.close(f"{t} leaf {k}", next(r), want_leaf)
for k, x in enumerate(P):
    ck.close(f"exp leaf {k}", next(r), np.exp(x), rtol=1e-15)
for t in ["w", "wf", "cl", "mx", "po", "gt", "z", "c32"]:
    for k, want_leaf in enumerate(want[t]):
        got = next(r)
        ck.true(f"{t} leaf {k} dtype", got.dtype == np.asarray(want_leaf).dtype, str(got.dtype))
        ck.close(f"{t} leaf {k}", got, want_leaf)


def seqsum(xs, dt):
    acc = dt(0)
    for v in xs:
        acc = dt(acc + dt(v))
    return acc


tot, tot2, tot3, o0, o1 = next(r), next(r), next(r), next(r), next(r)
# sum(tuple): each leaf summed sequentially in the widest float dtype, then leaf sums added.
ck.close("sum(tuple) f64", tot, (seqsum(a.ravel(), np.float64) + seqsum(b, np.float64)) +
         seqsum(c, np.float64))
ck.true("sum(tuple) f64 dtype", tot.dtype == np.float64, str(tot.dtype))
ck.close("sum((f32, f64))", tot2,
         seqsum(x32.astype(np.float64), np.float64) + seqsum(a.ravel(), np.float64))
ck.true("sum((f32, f32)) is f32", tot3.dtype == np.float32, str(tot3.dtype))
ck.close("sum((f32, f32))", tot3, np.float32(seqsum(x32, np.float32) * np.float32(2)))
ck.close("ones_like f32 leaf", o0, np.ones(5, np.float32))
ck.true("ones_like i32 leaf", o1.dtype == np.int32 and o1 == 1, repr(o1))
ck.finish("tuple arithmetic")
