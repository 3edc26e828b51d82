#!/usr/bin/env python3
"""gen_trl.py --seed N — print one random, well-formed `.trl` program (the same N always gives the
same program), for the differential back-end fuzzer (tools/fuzz/diff_fuzz.py).

A program is a chain of tensors, each reading only tensors defined before it (so the point-level
dependence graph is acyclic by construction), followed by emits and sometimes a save:

  dims        t always (T in 2..5), b (batch, 1..3) and i (iterations, 2..3) sometimes
  data        x[b, t] = E            plain equations; E is a typed random expression
  forward     x[0] = E0; x[t+1] = tanh(a * x[t] + E)   (also 2nd order: x[0], x[1], x[t+2])
  reverse     g[T-1] = E0; g[t] = tanh(E + 0.9 * g[t+1])  (or g[min(t+2, T-1)])
  guards      y[t] = A when t < k; [y[t] = C when t == m;] y[t] = B otherwise; about a third
              of the guards quasi-affine (t % m == j, (t + c) % m == 0, t / m < j, floor(t / m) == j,
              alone or with the affine one), drawn from a stream of their own
  windows     y[t] = x[t-k] when t >= k; y[t] = E otherwise;  x[max(t-2, 0)], x[min(t+1, T-1)]
  slices      sum(x[0:t+1], axis=0), mean(x[max(t-2, 0):t+1], axis=0), max(x[t:T], axis=0),
              x[0:B, t]
  override    y[0] = E0; y[t] = E   (the constant pattern is more specific)
  tuples      (p, q)[t] = (E1, E2), or a fn returning a tuple
  training    w[0] = init; loss[i] = f(w[i], data); w[i+1] = w[i] - lr * grad(loss[i], w[i])
              (or std.optim.adam, a tuple parameter, grad of a tuple), model tensors over (i, t)
              and (b, i, t) with recurrences, windows and guards on the differentiated path
An expression E has a chosen dtype (f32, f64, i32, bool) and spatial shape ((), (n,), (n, m))
and is built from reads (point, clamped, shifted, slice + reduction), literals and arange,
coordinates, rng/uniform/normal/categorical keys, elementwise math, where, matmul, transpose,
reshape, concat, stack, softmax/log_softmax/logsumexp, cumsum, reductions with axis=, gather,
one_hot, casts and small fns (inlined).  Values stay finite and i32 values small by
construction (tanh, % 7, log(1.5 + tanh), sqrt(abs + 0.25)), so run-time errors are rare.

Usage: gen_trl.py --seed N            one program on stdout
       gen_trl.py --seed N --count K --out DIR   programs N .. N+K-1 as DIR/prog_<seed>.trl"""
import argparse
import os
import random

FLOAT = ("f32", "f64")


class Tensor:
    def __init__(self, name, dims, dtype, shape, tlen=0, diff=False, param=False):
        self.name, self.dims, self.dtype, self.shape = name, dims, dtype, tuple(shape)
        self.tlen = tlen      # points along t: T, T+1 (x[t+1] = ...) or T+2
        self.diff = diff      # depends on a trained parameter (no rng on its path)
        self.param = param    # the parameter itself (read only at the point i)


class Ctx:
    """Where an expression is evaluated: coords maps each dim of the consumer's point to the
    index text that reads the same coordinate ('t', 'T-1', '0'); vars are the dims usable as
    values; diff restricts the forms to what grad supports (no rng, rank ≤ 2 dynamic blocks)."""

    def __init__(self, coords, vars_, pool, diff=False, rng_ok=True, emit=False):
        self.coords, self.vars, self.pool = coords, vars_, pool
        self.diff, self.rng_ok, self.emit = diff, rng_ok and not diff, emit


def shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        # Quasi-affine guards (t % m, t / m, floor(t / m)) come from their own stream, so that
        # the rest of a seed's program is what it was before they existed.
        self.rq = random.Random(seed * 7919 + 17)
        self.seed = seed
        self.lines, self.tensors, self.fns = [], [], []
        self.salt = 0
        self.counter = 0
        self.imports = set()

    # ---------------------------------------------------------------- helpers
    def name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def next_salt(self):
        self.salt += 1
        return self.salt

    def ext(self, t, d):
        """Number of points of tensor t along dim d."""
        if d == "t":
            return t.tlen
        return self.bounds[d]

    def bound_text(self, t, d):
        base = {"b": "B", "i": "I", "t": "T"}[d]
        n = self.ext(t, d) - self.bounds[d]
        return base if n == 0 else f"{base}+{n}"

    def lit(self, dtype, shape):
        """A strong literal of the dtype and shape (values in [-1, 1])."""
        r = self.r
        vals = ["0.5", "-0.25", "0.75", "1.0", "-1.0", "0.125", "-0.5", "0.3"]
        if dtype == "i32":
            vals = ["0", "1", "2", "3", "-1", "4"]
        if dtype == "bool":
            vals = ["true", "false"]

        def rec(s):
            if not s:
                return r.choice(vals)
            return "[" + ", ".join(rec(s[1:]) for _ in range(s[0])) + "]"
        if not shape and r.random() < 0.5 and dtype in FLOAT:
            return f"{dtype}({r.choice(vals)})"
        return f"{dtype}({rec(shape)})"

    def pick_shape(self):
        r = self.r
        c = r.random()
        if c < 0.45:
            return ()
        if c < 0.8:
            return (r.choice(self.sizes),)
        return (r.choice(self.sizes), r.choice(self.sizes))

    # ---------------------------------------------------------------- reads
    def read(self, src, ctx, allow_slice=True):
        """A read of src from ctx with src's dtype and shape (slices are reduced at once)."""
        r = self.r
        idx, nslices, dynamic = [], 0, False
        for d in src.dims:
            ext = self.ext(src, d)
            if d in ctx.coords:
                c = ctx.coords[d]
                if src.param or (ctx.diff and src.diff and d == "i"):
                    idx.append(c)
                    continue
                if d in ctx.vars and d == "t":
                    x = r.random()
                    forms = [("t", 0.4), ("max(t-1, 0)", 0.1),
                             (f"max(t-{r.randint(1, 3)}, 0)", 0.05), ("min(t+1, T-1)", 0.1)]
                    if src.tlen > self.bounds["t"]:
                        forms.append(("t+1", 0.1))
                    slices = [("0:t+1", 0.06), (f"max(t-{r.randint(1, 2)}, 0):t+1", 0.06),
                              ("t:T", 0.06), (f"t:min(t+{r.randint(1, 3)}, T)", 0.04)]
                    if ctx.diff and (len(src.shape) > 1 or nslices):
                        slices = []
                    if not allow_slice:
                        slices = []
                    tot = sum(w for _, w in forms + slices)
                    x *= tot
                    for f, w in forms + slices:
                        x -= w
                        if x <= 0:
                            break
                    idx.append(f)
                    if ":" in f:
                        nslices += 1
                        dynamic = True
                    continue
                if d in ctx.vars:  # b or i
                    if allow_slice and not (ctx.diff and src.diff) and r.random() < 0.15 \
                            and not (ctx.diff and len(src.shape) > 1):
                        idx.append(f"0:{self.bound_text(src, d)}")
                        nslices += 1
                    elif not (ctx.diff and src.diff) and r.random() < 0.1:
                        idx.append(str(r.randrange(ext)))
                    else:
                        idx.append(d)
                    continue
                # the consumer's coordinate is a constant (a base case)
                if allow_slice and r.random() < 0.2 and not (ctx.diff and len(src.shape) > 1):
                    idx.append(f"0:{self.bound_text(src, d)}")
                    nslices += 1
                elif r.random() < 0.7:
                    idx.append(c)
                else:
                    idx.append(str(r.randrange(min(ext, self.bounds[d]))))
                continue
            # a dim the consumer does not have: a constant or the whole range
            if allow_slice and r.random() < 0.5 and not (ctx.diff and (len(src.shape) > 1 or
                                                                          dynamic)):
                idx.append(f"0:{self.bound_text(src, d)}")
                nslices += 1
            else:
                idx.append(str(r.randrange(ext)))
        e = src.name + (f"[{', '.join(idx)}]" if idx else "")
        if nslices:
            axes = "0" if nslices == 1 else "[" + ", ".join(str(k) for k in range(nslices)) + "]"
            if src.dtype in FLOAT:
                op = r.choice(["sum", "sum", "mean", "max", "min", "logsumexp"])
            elif src.dtype == "i32":
                op = r.choice(["max", "min"])
            else:
                op = "sum"  # bool: a count
                e = f"(sum({e}, axis={axes}) > 1)"
                return e
            e = f"{op}({e}, axis={axes})"
        return e

    def readable(self, ctx, dtype=None, shape=None):
        out = []
        for s in ctx.pool:
            if s.param and not ("i" in ctx.coords and "i" in ctx.vars):
                continue
            if s.param and not ctx.diff:
                continue
            if dtype is not None and s.dtype != dtype:
                continue
            if shape is not None and s.shape != tuple(shape):
                continue
            out.append(s)
        return out

    # ---------------------------------------------------------------- expressions
    def key(self, ctx):
        coords = [d for d in ("b", "i", "t") if d in ctx.vars and d in ctx.coords]
        self.r.shuffle(coords)
        return f"rng({', '.join(coords + [str(self.next_salt())])})"

    def coord(self, ctx, dtype):
        vs = [d for d in ("b", "i", "t") if d in ctx.vars]
        if not vs:
            return None
        d = self.r.choice(vs)
        if dtype == "bool":
            return f"({d} % 2 == {self.r.randint(0, 1)})"
        if dtype == "i32":
            return f"({d} + {self.r.randint(0, 3)}) % 5"
        return f"{dtype}({d}) * 0.25"

    def leaf(self, ctx, dtype, shape):
        r = self.r
        cands = self.readable(ctx, dtype, shape)
        other = [s for s in self.readable(ctx, None, shape)
                 if (s.dtype in FLOAT and dtype in FLOAT and s.dtype != dtype)
                 or (s.dtype == "i32" and dtype in FLOAT)]
        anyr = [s for s in self.readable(ctx) if s.dtype != "bool" or dtype == "bool"]
        c = r.random()
        if cands and c < 0.4:
            return self.read(r.choice(cands), ctx)
        if other and c < 0.5:
            return f"{dtype}({self.read(r.choice(other), ctx)})"
        if anyr and c < 0.65 and dtype != "bool":
            s = r.choice(anyr)
            e = self.read(s, ctx)
            if s.dtype != dtype:
                if dtype == "i32" and s.dtype in FLOAT:
                    e = f"i32(floor(tanh({e}) * 3.0))"
                else:
                    e = f"{dtype}({e})"
            return self.adapt(e, s.shape, shape, dtype, ctx)
        if ctx.rng_ok and dtype in FLOAT and c < 0.82:
            fn = r.choice(["uniform", "normal"])
            dt = ", dtype=f64" if dtype == "f64" else ""
            return f"{fn}({self.key(ctx)}, {shape_text(shape)}{dt})"
        if not shape and c < 0.9:
            e = self.coord(ctx, dtype)
            if e:
                return e
        if dtype == "i32" and len(shape) == 1 and r.random() < 0.5:
            return f"arange({shape[0]}) % {r.randint(2, 5)}"
        if dtype in FLOAT and len(shape) == 1 and r.random() < 0.3:
            return f"{dtype}(arange({shape[0]})) * 0.25"
        if dtype in FLOAT and shape and r.random() < 0.2:
            f = r.choice(["zeros", "ones"])
            return f"{f}({shape_text(shape)}, dtype={dtype})"
        return self.lit(dtype, shape)

    def adapt(self, e, have, want, dtype, ctx):
        """e (of shape have) turned into shape want by reductions, gathers and broadcasting."""
        r = self.r
        have, want = tuple(have), tuple(want)
        if have == want:
            return e
        flt = dtype in FLOAT
        if not want:
            if flt:
                return f"{r.choice(['sum', 'mean', 'max', 'min'])}({e})"
            j = r.randrange(have[0])
            return f"({e})[{j}]" if len(have) == 1 else f"({e})[{j}, {r.randrange(have[1])}]"
        if len(have) == 2:
            if have[1] == want[0] and len(want) == 1:
                op = r.choice(["sum", "max", "min"] + (["mean"] if flt else []))
                return f"{op}({e}, axis=0)"
            if have[0] == want[0] and len(want) == 1:
                return f"({e})[:, {r.randrange(have[1])}]"
            if have == want[::-1]:
                return f"transpose({e})"
            return self.adapt(f"({e})[{r.randrange(have[0])}]", have[1:], want, dtype, ctx)
        if not have:
            z = "zeros" if r.random() < 0.5 else "ones"
            op = "+" if z == "zeros" else "*"
            dt = dtype if dtype != "i32" else "i32"
            return f"({e} {op} {z}({shape_text(want)}, dtype={dt}))"
        # have is a vector
        n = have[0]
        if len(want) == 1:
            m = want[0]
            if m < n and r.random() < 0.5:
                lo = r.randint(0, n - m)
                return f"({e})[{lo}:{lo + m}]"
            return f"gather({e}, arange({m}) % {n})"
        a, b = want
        if b == n:
            return f"({e} * ones([{a}, 1], dtype={dtype}))" if dtype != "i32" else \
                f"({e} + zeros([{a}, {b}], dtype=i32))"
        return self.adapt(self.adapt(e, have, (b,), dtype, ctx), (b,), want, dtype, ctx)

    def expr(self, ctx, dtype, shape, depth):
        shape = tuple(shape)
        if depth <= 0 or self.r.random() < 0.25:
            return self.leaf(ctx, dtype, shape)
        if dtype in FLOAT:
            return self.fexpr(ctx, dtype, shape, depth)
        if dtype == "i32":
            return self.iexpr(ctx, shape, depth)
        return self.bexpr(ctx, shape, depth)

    def bexpr(self, ctx, shape, depth):
        r = self.r
        c = r.random()
        if c < 0.6:
            dt = r.choice(FLOAT)
            op = r.choice([">", "<", ">=", "<=", "!="])
            return (f"({self.expr(ctx, dt, shape, depth - 1)} {op} "
                    f"{self.expr(ctx, dt, shape, depth - 1)})")
        if c < 0.75:
            return f"({self.iexpr(ctx, shape, depth - 1)} == {r.randint(0, 3)})"
        if c < 0.9:
            op = r.choice(["&&", "||"])
            return f"({self.expr(ctx, 'bool', shape, depth - 1)} {op} " \
                   f"{self.expr(ctx, 'bool', shape, depth - 1)})"
        return f"!{self.expr(ctx, 'bool', shape, depth - 1)}"

    def iexpr(self, ctx, shape, depth):
        r = self.r
        sub = lambda s=shape: self.expr(ctx, "i32", s, depth - 1)  # noqa: E731
        c = r.random()
        if c < 0.3:
            op = r.choice(["+", "*", "-"])
            return f"(({sub()} {op} {sub()}) % {r.randint(3, 7)})"
        if c < 0.4:
            return f"{r.choice(['max', 'min'])}({sub()}, {sub()})"
        if c < 0.5:
            return f"abs({sub()} - {r.randint(0, 3)})"
        if c < 0.62 and len(shape) < 2:
            n = r.choice(self.sizes)
            logits = self.expr(ctx, r.choice(FLOAT), shape + (n,), depth - 1)
            if ctx.rng_ok and r.random() < 0.5:
                return f"categorical({self.key(ctx)}, {logits})"
            return f"argmax({logits}, axis=-1)" if shape else f"argmax({logits})"
        if c < 0.72:
            dt = r.choice(FLOAT)
            return f"i32(floor(tanh({self.expr(ctx, dt, shape, depth - 1)}) * 3.0))"
        if c < 0.8:
            return f"where({self.expr(ctx, 'bool', shape, depth - 1)}, {sub()}, {sub()})"
        if c < 0.9 and not shape:
            n = r.choice(self.sizes)
            return f"sum({self.expr(ctx, 'i32', (n,), depth - 1)}) % 7"
        return f"({sub()} % {r.randint(2, 7)})"

    def fexpr(self, ctx, dt, shape, depth):
        r = self.r
        sub = lambda s=shape, d=dt: self.expr(ctx, d, s, depth - 1)  # noqa: E731
        kinds = ["bin", "bin", "bin", "unary", "unary", "where", "minmax", "reduce", "cast",
                 "scal", "fn"]
        if shape:
            kinds += ["matmul", "matmul", "shape"]
        else:
            kinds += ["dot", "pick"]
        if len(shape) == 1:
            kinds += ["softmax", "onehot"]
        k = r.choice(kinds)
        if k == "reduce" and len(shape) == 2:
            k = "bin"
        if k == "bin":
            op = r.choice(["+", "-", "*", "*"])
            a, b = sub(), sub()
            if shape and r.random() < 0.3:
                b = sub(())  # broadcast a scalar
            if r.random() < 0.15:
                return f"({a} / (1.5 + abs({b})))"
            return f"({a} {op} {b})"
        if k == "scal":
            return f"({r.choice(['0.5', '-0.75', '2.0', '0.1'])} * {sub()} " \
                   f"{r.choice(['+', '-'])} {r.choice(['0.25', '1.0', '0.5'])})"
        if k == "unary":
            f = r.choice(["tanh", "sigmoid", "sin", "cos", "abs", "relu", "exp_t", "log_t",
                          "sqrt_t", "sq", "clamp", "neg", "floor"])
            a = sub()
            return {"exp_t": f"exp(tanh({a}))", "log_t": f"log(1.5 + tanh({a}))",
                    "sqrt_t": f"sqrt(abs({a}) + 0.25)", "sq": f"({a}) ** 2",
                    "clamp": f"clamp({a}, -1.0, 1.0)", "neg": f"(-{a})",
                    "floor": f"floor({a})" if not ctx.diff else f"tanh({a})"}.get(f, f"{f}({a})")
        if k == "where":
            return f"where({self.expr(ctx, 'bool', shape, depth - 1)}, {sub()}, {sub()})"
        if k == "minmax":
            return f"{r.choice(['max', 'min'])}({sub()}, {sub()})"
        if k == "cast":
            if r.random() < 0.3 and not ctx.diff:
                return f"{dt}({self.expr(ctx, 'i32', shape, depth - 1)})"
            other = "f64" if dt == "f32" else "f32"
            return f"{dt}({self.expr(ctx, other, shape, depth - 1)})"
        if k == "fn":
            return self.call_fn(ctx, dt, shape, depth)
        if k == "reduce":  # reduce a larger array down to shape
            n = r.choice(self.sizes)
            op = r.choice(["sum", "mean", "max", "min", "logsumexp"])
            if not shape:
                big = r.choice([(n,), (n, r.choice(self.sizes))])
                return f"{op}({sub(big)})"
            if len(shape) == 1:
                if r.random() < 0.5:
                    return f"{op}({sub((n,) + shape)}, axis=0)"
                return f"{op}({sub(shape + (n,))}, axis=-1)"
            return f"{op}({sub((n,) + shape)}, axis=0)"
        if k == "dot":
            n = r.choice(self.sizes)
            return f"({sub((n,))} @ {sub((n,))})"
        if k == "pick":
            n = r.choice(self.sizes)
            j = r.randrange(n) if r.random() < 0.8 else -1
            f = r.choice(["", "softmax", "log_softmax", "cumsum"])
            if ctx.diff and f == "cumsum":
                f = ""
            inner = sub((n,))
            return f"{f}({inner})[{j}]" if f else f"({inner})[{j}]"
        if k == "matmul":
            n = r.choice(self.sizes)
            if len(shape) == 1:
                if r.random() < 0.5:
                    return f"({sub((shape[0], n))} @ {sub((n,))})"
                return f"({sub((n,))} @ {sub((n, shape[0]))})"
            return f"({sub((shape[0], n))} @ {sub((n, shape[1]))})"
        if k == "softmax":
            f = r.choice(["softmax", "log_softmax", "cumsum"] + ([] if ctx.diff else ["dcs"]))
            if f == "dcs":
                return f"discounted_cumsum({sub()}, 0.9)"
            return f"{f}({sub()})"
        if k == "onehot":
            n = shape[0]
            if r.random() < 0.5:
                return f"one_hot({self.expr(ctx, 'i32', (), depth - 1)} % {n}, {n}, dtype={dt})"
            m = r.choice(self.sizes)
            idx = f"(arange({n}) * {r.randint(1, 3)} + {r.randint(0, 3)}) % {m}"
            return f"gather({sub((m,))}, {idx})"
        if k == "shape":
            if len(shape) == 1:
                n = shape[0]
                c = r.random()
                if c < 0.3 and n >= 2:
                    a = r.randint(1, n - 1)
                    return f"concat({sub((a,))}, {sub((n - a,))})"
                if c < 0.55 and n <= 3:
                    return "stack(" + ", ".join(sub(()) for _ in range(n)) + ")"
                if c < 0.75:
                    m = r.choice(self.sizes)
                    return f"({sub((m, n))})[{r.randrange(m)}]"
                return f"reshape({sub((1, n))}, [{n}])"
            n, m = shape
            c = r.random()
            if c < 0.3:
                return f"transpose({sub((m, n))})"
            if c < 0.5:
                return f"reshape({sub((n * m,))}, [{n}, {m}])"
            if c < 0.7 and n <= 3:
                return "stack(" + ", ".join(sub((m,)) for _ in range(n)) + ")"
            if c < 0.85:
                return f"{r.choice(['softmax', 'log_softmax'])}({sub()}, axis={r.choice([0, -1])})"
            return f"({sub((n, 1))} * {sub((1, m))})"
        return sub()

    def call_fn(self, ctx, dt, shape, depth):
        r = self.r
        if not self.fns:
            return self.expr(ctx, dt, shape, depth - 1)
        f = r.choice(self.fns)
        args = [self.expr(ctx, dt, shape, depth - 1) for _ in range(f[1])]
        call = f"{f[0]}({', '.join(args)})"
        return call + (f"[{r.randint(0, 1)}]" if f[2] else "")

    def body(self, ctx, dtype, shape, depth=None):
        d = self.r.randint(1, 3) if depth is None else depth
        e = self.expr(ctx, dtype, shape, d)
        if dtype in FLOAT and self.r.random() < 0.5:
            e = f"tanh({e})"
        if dtype == "i32":
            e = f"({e}) % 7"
        return e

    # ---------------------------------------------------------------- definitions
    def lhs(self, t, tpos=None):
        items = [(tpos if (d == "t" and tpos is not None) else d) for d in t.dims]
        return t.name + (f"[{', '.join(items)}]" if items else "")

    def ctx_for(self, dims, tpos=None, diff=False, pool=None):
        coords = {d: d for d in dims}
        vars_ = set(dims)
        if tpos is not None and "t" in dims:
            coords["t"] = tpos
            vars_.discard("t")
        return Ctx(coords, vars_, self.tensors if pool is None else pool, diff=diff)

    def annotate(self, t):
        if self.r.random() < 0.15:
            ty = t.dtype + (shape_text(t.shape) if t.shape else "")
            self.lines.append(f"{self.lhs(t)} : {ty}")

    def define_data(self, diff=False, domains=None):
        r = self.r
        dims = list(r.choice(domains or self.domains))
        dtype = r.choice(["f32", "f32", "f64", "i32", "bool"] if not diff else ["f32", "f64"])
        if diff:
            dtype = self.pdtype
        shape = self.pick_shape() if dtype != "bool" else r.choice([(), ()] + [(self.sizes[0],)])
        kinds = ["plain", "plain", "tuple", "override"]
        if "t" in dims:
            kinds += ["forward", "forward", "reverse", "reverse", "guarded", "window", "second"]
        if dtype == "bool":
            kinds = ["plain", "guarded"] if "t" in dims else ["plain"]
        kind = r.choice(kinds)
        prefix = {"plain": "a", "tuple": "p", "override": "o", "forward": "x", "reverse": "g",
                  "guarded": "y", "window": "w", "second": "s"}[kind]
        t = Tensor(self.name(prefix if not diff else "m" + prefix), dims, dtype, shape,
                   tlen=self.bounds["t"], diff=diff)
        L = self.lines
        ctx = lambda tpos=None: self.ctx_for(dims, tpos, diff)  # noqa: E731
        if kind in ("plain",) or (kind == "tuple" and dtype == "bool"):
            self.annotate(t)
            L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)}")
        elif kind == "override":
            c0 = dims and r.choice(dims)
            if not dims:
                L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)}")
            else:
                cv = "0" if r.random() < 0.6 else f"{ {'b': 'B', 'i': 'I', 't': 'T'}[c0]}-1"
                cx = self.ctx_for(dims, None, diff)
                cx.coords[c0] = cv
                cx.vars.discard(c0)
                items = [(cv if d == c0 else d) for d in dims]
                L.append(f"{t.name}[{', '.join(items)}] = {self.body(cx, dtype, shape)}")
                L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)}")
        elif kind == "tuple":
            q = Tensor(self.name("q" if not diff else "mq"), dims, r.choice(["f32", "f64", "i32"])
                       if not diff else dtype, self.pick_shape(), tlen=self.bounds["t"], diff=diff)
            names = f"({t.name}, {q.name})" + (f"[{', '.join(dims)}]" if dims else "")
            pair = [f for f in self.fns if f[2] and f[1] == 1]
            if pair and dtype in FLOAT and r.random() < 0.3:
                q.dtype, q.shape = dtype, shape
                L.append(f"{names} = {pair[0][0]}({self.body(ctx(), dtype, shape)})")
            else:
                L.append(f"{names} = ({self.body(ctx(), dtype, shape)}, "
                         f"{self.body(ctx(), q.dtype, q.shape)})")
            self.tensors.append(t)
            t = q
        elif kind in ("forward", "second"):
            t.tlen = self.bounds["t"] + (1 if kind == "forward" else 2)
            self.annotate(t)
            L.append(f"{self.lhs(t, '0')} = {self.body(ctx('0'), dtype, shape)}")
            if kind == "second":
                L.append(f"{self.lhs(t, '1')} = {self.body(ctx('1'), dtype, shape)}")
            prev = [self.lhs(t, "t")] + ([self.lhs(t, "t+1")] if kind == "second" else [])
            if r.random() < 0.2 and kind == "forward":
                prev.append(self.lhs(t, "max(t-1, 0)"))
            step_lhs = self.lhs(t, "t+1" if kind == "forward" else "t+2")
            for guard in self.step_guards():
                E = self.body(ctx(), dtype, shape)
                if dtype in FLOAT:
                    a = r.choice(["0.5", "0.9", "-0.75"])
                    rhs = f"tanh({a} * {' + '.join(prev)} + {E})"
                elif dtype == "i32":
                    rhs = f"({' + '.join(prev)} * 3 + {E}) % 7"
                else:
                    rhs = f"!{prev[0]}"
                L.append(f"{step_lhs} = {rhs}{guard}")
        elif kind == "reverse":
            self.annotate(t)
            L.append(f"{self.lhs(t, 'T-1')} = {self.body(ctx('T-1'), dtype, shape)}")
            nxt = self.lhs(t, "t+1" if r.random() < 0.8 else "min(t+2, T-1)")
            for guard in self.step_guards():
                E = self.body(ctx(), dtype, shape)
                rhs = (f"tanh({E} + 0.9 * {nxt})" if dtype in FLOAT else
                       f"({E} + 2 * {nxt}) % 7" if dtype == "i32" else f"!{nxt}")
                L.append(f"{self.lhs(t)} = {rhs}{guard}")
        elif kind == "guarded":
            T = self.bounds["t"]
            k = r.randint(1, T)
            g1 = self.t_guard('<', k)
            L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)} when {g1}")
            if r.random() < 0.4 and k < T:
                g2 = self.t_guard('==', k)
                if g1 != f"t < {k}" or g2 != f"t == {k}":  # quasi-affine ones may overlap
                    g2 = f"!({g1}) && ({g2})"
                L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)} when {g2}")
            L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)} otherwise")
        elif kind == "window":
            srcs = [s for s in self.tensors if "t" in s.dims and not s.param
                    and (s.dtype == dtype or (s.dtype != "bool" and dtype != "bool"))
                    and all(d in dims for d in s.dims)]
            if not srcs:
                L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)}")
            else:
                s = r.choice(srcs)
                k = r.randint(1, 3)
                items = [("t-%d" % k if d == "t" else d) for d in s.dims]
                rd = f"{s.name}[{', '.join(items)}]"
                if s.dtype != dtype:
                    rd = f"i32(floor(tanh({rd}) * 3.0))" if dtype == "i32" and \
                        s.dtype in FLOAT else f"{dtype}({rd})"
                rd = self.adapt(rd, s.shape, t.shape, dtype, ctx())
                e = self.body(ctx(), dtype, shape, 1)
                if dtype in FLOAT:
                    rhs = f"{rd} * 0.5 + {e}"
                elif dtype == "i32":
                    rhs = f"({rd} + {e}) % 7"
                else:
                    rhs = rd
                L.append(f"{self.lhs(t)} = {rhs} when t >= {k}")
                L.append(f"{self.lhs(t)} = {self.body(ctx(), dtype, shape)} otherwise")
        self.tensors.append(t)
        return t

    def step_guards(self):
        if self.r.random() < 0.25:
            k = self.r.randint(1, self.bounds["t"] - 1)
            return [f" when {self.t_guard('<', k)}", " otherwise"]
        return [""]

    def t_guard(self, op, k):
        """`t < k` / `t == k`, or (about a third of the time) a quasi-affine guard on t:
        a remainder, an exact or a floored quotient by a small constant, alone or with the
        affine one."""
        q = self.rq
        plain = f"t {op} {k}"
        if q.random() >= 0.35:
            return plain
        m = q.randint(2, 4)
        form = q.choice(["mod", "mod_shift", "div", "floor"])
        if form == "mod":
            g = f"t % {m} {q.choice(['==', '!='])} {q.randint(0, m - 1)}"
        elif form == "mod_shift":
            g = f"(t + {q.randint(1, 3)}) % {m} == 0"
        elif form == "div":
            g = f"t / {m} {q.choice(['<', '>=', '=='])} {q.randint(0, 3)}"
        else:
            g = f"floor(t / {m}) {q.choice(['==', '<', '!='])} {q.randint(0, 3)}"
        return q.choice([g, f"{plain} && {g}", f"{plain} || {g}", f"!({g})"])

    # ---------------------------------------------------------------- fns
    def make_fns(self):
        r = self.r
        if r.random() < 0.5:
            self.lines.append("fn mix(a, b) = tanh(0.5 * a - 0.25 * b)")
            self.fns.append(("mix", 2, False))
        if r.random() < 0.4:
            self.lines.append("fn sq(a) = a * a")
            self.fns.append(("sq", 1, False))
        if r.random() < 0.4:
            self.lines.append("fn pair(a) {\n    let c = tanh(a)\n    return (c, c * 0.5 - a)\n}")
            self.fns.append(("pair", 1, True))

    # ---------------------------------------------------------------- training
    def training(self):
        """A parameter trained by gradient descent over i, through a model of data tensors."""
        r = self.r
        self.pdtype = r.choice(["f32", "f32", "f64"])
        n, n2, m = r.choice(self.sizes), r.choice(self.sizes), r.choice(self.sizes)
        pshape = r.choice([(), (n,), (n2, m)])
        style = r.choice(["sgd", "sgd", "gtensor", "adam", "tuple", "tuplegrad"])
        dt = self.pdtype
        L = self.lines
        P = Tensor(self.name("w"), ["i"], dt, pshape, param=True, diff=True)
        init = f"{dt}({r.choice(['0.5', '0.1', '-0.3'])}) * normal(rng({self.next_salt()}), " \
               f"{shape_text(pshape)}{', dtype=f64' if dt == 'f64' else ''})"
        params = [P]
        if style in ("tuple", "tuplegrad"):
            V = Tensor(self.name("v"), ["i"], dt, (pshape[-1],) if pshape else (),
                       param=True, diff=True)
            params.append(V)
            vinit = f"zeros({shape_text(V.shape)}, dtype={dt})"
        pool = list(self.tensors)
        if style == "tuple":  # one tuple-valued tensor; the model reads its leaves
            net = self.name("net")
            L.append(f"{net}[0] = ({init}, {vinit})")
            P.name, V.name = f"{net}", f"{net}"
            leaves = [f"{net}[i][0]", f"{net}[i][1]"]
        else:
            L.append(f"{P.name}[0] = {init}")
            if style == "tuplegrad":
                L.append(f"{V.name}[0] = {vinit}")
            leaves = [f"{p.name}[i]" for p in params]
        # model tensors: each reads a parameter leaf and earlier model/data tensors
        model = []
        domains = [["i"], ["i", "t"]] + ([["b", "i", "t"], ["b", "i"]] if "b" in self.bounds_used
                                         else [])
        for k in range(r.randint(1, 3)):
            dims = r.choice(domains)
            shape = r.choice([(), (r.choice(self.sizes),)])
            m = Tensor(self.name("m"), dims, dt, shape, tlen=self.bounds["t"], diff=True)
            cpool = pool + model
            ctx = lambda tpos=None: self.diff_ctx(dims, tpos, cpool)  # noqa: E731
            leaf = r.choice(leaves)
            lp = params[leaves.index(leaf)]

            def use_param(e, c=None, leaf=leaf, lp=lp, shape=shape):
                pe = leaf
                if lp.shape == shape:
                    pass
                elif len(lp.shape) == 2 and len(shape) == 1 and lp.shape[1] == shape[0]:
                    pe = f"({self.expr(c or ctx(), dt, (lp.shape[0],), 1)} @ {leaf})"
                elif len(lp.shape) == 1 and len(shape) == 0:
                    pe = f"({self.expr(c or ctx(), dt, lp.shape, 1)} @ {leaf})"
                else:
                    pe = f"sum({leaf})"
                return f"tanh({pe} * {e})" if r.random() < 0.5 else f"tanh({pe} + {e})"
            form = r.choice(["plain", "forward", "reverse", "guarded"] if "t" in dims
                            else ["plain"])
            if form == "plain":
                L.append(f"{self.lhs(m)} = {use_param(self.body(ctx(), dt, shape, 2))}")
            elif form == "forward":
                m.tlen = self.bounds["t"] + 1
                e0 = use_param(self.body(ctx('0'), dt, shape, 1), ctx('0'))
                L.append(f"{self.lhs(m, '0')} = {e0}")
                L.append(f"{self.lhs(m, 't+1')} = tanh(0.5 * {self.lhs(m, 't')} + "
                         f"{use_param(self.body(ctx(), dt, shape, 1))})")
            elif form == "reverse":
                L.append(f"{self.lhs(m, 'T-1')} = {self.body(ctx('T-1'), dt, shape, 1)}")
                L.append(f"{self.lhs(m)} = tanh({use_param(self.body(ctx(), dt, shape, 1))} + "
                         f"0.9 * {self.lhs(m, 't+1')})")
            else:
                k2 = r.randint(1, self.bounds["t"])
                e = use_param(self.body(ctx(), dt, shape, 1))
                L.append(f"{self.lhs(m)} = {e} when t < {k2}")
                L.append(f"{self.lhs(m)} = {self.body(ctx(), dt, shape, 1)} otherwise")
            model.append(m)
            self.tensors.append(m)
        # the loss: a scalar of the last model tensor (whole slices) plus a small term
        last = model[-1]
        lctx = self.diff_ctx(["i"], None, pool + model)
        idx = [("i" if d == "i" else f"0:{self.bound_text(last, d)}") for d in last.dims]
        red = r.choice(["mean", "sum"])
        rd = f"{last.name}[{', '.join(idx)}]"
        loss = Tensor(self.name("loss"), ["i"], dt, (), diff=True)
        extra = self.expr(lctx, dt, (), 1)
        L.append(f"{loss.name}[i] = {red}({rd} ** 2) + 0.1 * {extra}")
        self.tensors.append(loss)
        lr = r.choice(["0.1", "0.05", "0.2"])
        g = None
        if style == "sgd":
            L.append(f"{P.name}[i+1] = {P.name}[i] - {lr} * grad({loss.name}[i], {P.name}[i])")
        elif style == "gtensor":
            g = Tensor(self.name("gr"), ["i"], dt, pshape)
            L.append(f"{g.name}[i] = grad({loss.name}[i], {P.name}[i])")
            L.append(f"{P.name}[i+1] = {P.name}[i] - {lr} * {g.name}[i]")
        elif style == "adam":
            self.imports.add("std.optim")
            opt = self.name("opt")
            L.append(f"{opt}[0] = optim.adam_init({P.name}[0])")
            L.append(f"({P.name}, {opt})[i+1] = optim.adam({P.name}[i], "
                     f"grad({loss.name}[i], {P.name}[i]), {opt}[i], {lr})")
        elif style == "tuple":
            self.imports.add("std.optim")
            L.append(f"{P.name}[i+1] = optim.sgd({P.name}[i], "
                     f"grad({loss.name}[i], {P.name}[i]), {lr})")
        else:  # grad of a tuple of reads
            gt = self.name("gt")
            L.append(f"{gt}[i] = grad({loss.name}[i], ({P.name}[i], {V.name}[i]))")
            L.append(f"{P.name}[i+1] = {P.name}[i] - {lr} * {gt}[i][0]")
            L.append(f"{V.name}[i+1] = {V.name}[i] - {lr} * {gt}[i][1]")
        fields = [f"loss: {loss.name}[i]"]
        if style == "tuple":
            fields.append(f"w: {P.name}[i][0]")
        else:
            fields.append(f"w: {P.name}[i]")
        if g is not None:
            fields.append(f"g: {g.name}[i]")
        L.append(f'emit "train"[i] {{ {", ".join(fields)} }}')
        if r.random() < 0.3 and style != "tuple":
            self.saves.append(f'save {P.name}[I] to "w_final.npy"')

    def diff_ctx(self, dims, tpos, pool):
        c = self.ctx_for(dims, tpos, True, pool)
        return c

    # ---------------------------------------------------------------- outputs
    def emit(self, k):
        r = self.r
        dims = list(r.choice(self.domains))
        ctx = Ctx({d: d for d in dims}, set(dims), [s for s in self.tensors if not s.param],
                  emit=True)
        fields = []
        for j in range(r.randint(1, 3)):
            cands = self.readable(ctx)
            if cands and r.random() < 0.75:
                fields.append(f"f{j}: {self.read(r.choice(cands), ctx)}")
            else:
                dt = r.choice(["f32", "f64", "i32", "bool"])
                fields.append(f"f{j}: {self.expr(ctx, dt, self.pick_shape(), 2)}")
        guard = ""
        if r.random() < 0.3:
            guard = f" when {self.expr(ctx, 'bool', (), 2)}"
        target = f"[{', '.join(dims)}]" if dims else ""
        self.lines.append(f'emit "e{k}"{target} {{ {", ".join(fields)} }}{guard}')

    def save(self):
        r = self.r
        ctx = Ctx({}, set(), [s for s in self.tensors if not s.param])
        cands = [s for s in ctx.pool if s.dtype != "bool"]
        if not cands:
            return
        s = r.choice(cands)
        idx = [f"0:{self.bound_text(s, d)}" for d in s.dims]
        e = s.name + (f"[{', '.join(idx)}]" if idx else "")
        self.saves.append(f'save {e} to "out{len(self.saves)}.npy"')

    def program(self):
        r = self.r
        self.bounds = {"t": r.randint(2, 5) if r.random() < 0.8 else r.randint(6, 12),
                       "b": r.randint(1, 3) if r.random() < 0.9 else r.randint(4, 8),
                       "i": r.randint(2, 3)}
        self.sizes = r.sample([1, 2, 3, 4], r.randint(1, 3))
        use_b, use_i = r.random() < 0.6, r.random() < 0.5
        self.bounds_used = {"t"} | ({"b"} if use_b else set()) | ({"i"} if use_i else set())
        self.domains = [["t"], ["t"], []]
        if use_b:
            self.domains += [["b", "t"], ["b", "t"], ["b"]]
        self.saves = []
        head = [f"// gen_trl.py --seed {self.seed}"]
        for d, B in (("b", "B"), ("i", "I"), ("t", "T")):
            if d in self.bounds_used:
                head.append(f"dim {d} < {B} = {self.bounds[d]}")
        self.make_fns()
        for _ in range(r.randint(3, 9)):
            self.define_data()
        if use_i:
            self.training()
        for k in range(r.randint(1, 3)):
            self.emit(k)
        if r.random() < 0.25:
            self.save()
        imports = [f"import {m}" for m in sorted(self.imports)]
        return "\n".join(head[:1] + imports + head[1:] + [""] + self.lines + self.saves) + "\n"


def generate(seed):
    return Gen(seed).program()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.out is None:
        for s in range(a.seed, a.seed + a.count):
            print(generate(s), end="")
        return
    os.makedirs(a.out, exist_ok=True)
    for s in range(a.seed, a.seed + a.count):
        with open(os.path.join(a.out, f"prog_{s}.trl"), "w") as f:
            f.write(generate(s))


if __name__ == "__main__":
    main()
