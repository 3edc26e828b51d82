#!/usr/bin/env python3
"""gen_programs — write N small random but valid .trl programs for the scheduled-interpreter
property test (test/random/run_random.py).

Usage: gen_programs.py SEED N OUTDIR   (writes OUTDIR/prog_<k>.trl, k = 0 .. N-1)

Each program declares a few dims (t always; b and i sometimes) and a chain of tensors, each
reading only earlier ones, drawn from these shapes of definition:
  base        r[b, t] = f32(t % 3) * 0.25 + uniform(rng(b, t), [])         (coords, randomness)
  forward     x[b, 0] = c;  x[b, t+1] = tanh(a * x[b, t] + term)          (points 0 .. T)
  reverse     g[b, T-1] = term;  g[b, t] = term + 0.9 * g[b, t+1]          (runs backwards)
  window      s[b, t] = term + 0.5 * sum(src[b, t:min(t+n, T)])           (dynamic slice)
              or sum(src[b, max(t-n, 0):t+1])
  guarded     y[t] = term when t < k;  y[t] = term otherwise
  tuple       (p, q)[b, t] = (term, term)
  integer     k[t] = (t * 3 + b) % 7 (+ reads of earlier i32 tensors)
A *term* reads an earlier tensor with every dim it has: a dim the consumer shares is read at the
same coordinate (t also shifted and clamped: src[max(t-1, 0)], src[min(t+1, T-1)]), other dims at
a constant or over their whole range (src[0:B, t]), then summed to a scalar and cast to the
consumer's dtype.  Floats stay finite (tanh, factors < 1).  Then 1-3 emits of several tensors.
The same SEED always gives the same programs."""
import os
import random
import sys

DIM_BOUND = {"b": "B", "i": "I", "t": "T"}


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.lines = []
        self.tensors = []  # dicts: name, dims, dtype, vec (spatial length or 0), tlen (T or T+1)

    def new_name(self, base):
        return f"{base}{len(self.tensors)}"

    # ---- reads ----------------------------------------------------------------------------
    def read(self, src, cdims, want):
        """A scalar expression of dtype "want" reading "src" from a consumer with dims "cdims"
        (None: reading is not possible, e.g. an i32 consumer of a float tensor)."""
        r = self.r
        if want == "i32" and src["dtype"] != "i32":
            return None
        idx = []
        sliced = False
        for d in src["dims"]:
            bound = self.bounds[d]
            if d in cdims:
                if d == "t":
                    c = r.random()
                    if c < 0.45:
                        idx.append("t")
                    elif c < 0.6:
                        idx.append("max(t-1, 0)")
                    elif c < 0.7:
                        idx.append("min(t+1, T-1)")
                    elif c < 0.8 and src["tlen"] > bound:
                        idx.append("t+1")  # a forward recurrence has the point T too
                    elif c < 0.9:
                        n = r.randint(1, 3)
                        idx.append(f"t:min(t+{n}, T)")
                        sliced = True
                    else:
                        n = r.randint(1, 3)
                        idx.append(f"max(t-{n}, 0):t+1")
                        sliced = True
                else:
                    idx.append(d)
            else:
                ext = src["tlen"] if d == "t" else bound
                if r.random() < 0.5:
                    idx.append(str(r.randrange(ext)))
                else:
                    idx.append(f"0:{DIM_BOUND[d]}" + ("+1" if ext > bound else ""))
                    sliced = True
        e = src["name"] + (f"[{', '.join(idx)}]" if idx else "")
        if sliced or src["vec"]:
            e = f"sum({e})"
        if src["dtype"] != want:
            e = f"{want}({e})"
        return e

    def term(self, cdims, want, avoid=None):
        """A sum of up to two reads of earlier tensors (or a coordinate expression)."""
        r = self.r
        cands = [s for s in self.tensors if s is not avoid]
        r.shuffle(cands)
        parts = []
        for s in cands:
            if len(parts) >= r.randint(1, 2):
                break
            e = self.read(s, cdims, want)
            if e is not None:
                parts.append(e)
        if want == "i32":
            parts.append(f"({' + '.join(d for d in cdims) or '1'}) % 5")
            return "(" + " + ".join(parts) + ") % 7"
        if not parts:
            parts.append(f"{want}({cdims[-1] if cdims else 1}) * 0.125")
        w = [f"{r.choice(['0.5', '0.25', '-0.5', '0.75'])} * {p}" for p in parts]
        return "tanh(" + " + ".join(w) + ")"

    # ---- definitions ----------------------------------------------------------------------
    def idx(self, dims, t=None):
        items = [(t if (d == "t" and t is not None) else d) for d in dims]
        return f"[{', '.join(items)}]" if items else ""

    def define(self):
        r = self.r
        dims = r.choice(self.domains)
        kind = r.choice(["base", "base", "forward", "reverse", "window", "guarded", "tuple",
                         "integer"] if "t" in dims else ["base", "tuple", "integer"])
        if not self.tensors and kind not in ("integer",):
            kind = "base"
        dtype = r.choice(["f32", "f32", "f64"])
        name = self.new_name({"base": "r", "forward": "x", "reverse": "g", "window": "s",
                              "guarded": "y", "tuple": "p", "integer": "k"}[kind])
        T = {"dims": dims, "dtype": dtype, "vec": 0, "tlen": self.bounds["t"], "name": name}
        L = self.lines
        if kind == "base":
            coords = ", ".join(dims) if dims else "0"
            e = f"{dtype}({dims[-1] if dims else 0} % 3) * 0.25"
            if r.random() < 0.6:
                e += f" + uniform(rng({coords}), []" + (", dtype=f64)" if dtype == "f64" else ")")
            if self.tensors and r.random() < 0.5:
                e += " + " + self.term(dims, dtype)
            if r.random() < 0.2:
                T["vec"] = 3
                e = f"tanh(({e}) * [0.5, -0.25, 1.0])"
            L.append(f"{name}{self.idx(dims)} = {e}")
        elif kind == "integer":
            T["dtype"] = "i32"
            L.append(f"{name}{self.idx(dims)} = {self.term(dims, 'i32')}")
        elif kind == "forward":
            T["tlen"] = self.bounds["t"] + 1
            a = r.choice(["0.5", "0.9", "-0.75"])
            c0 = r.choice(["0.0", "0.5", "-1.0"])
            if dtype == "f64":
                c0 = f"f64({c0})"
            else:
                c0 = f"f32({c0})"
            L.append(f"{name}{self.idx(dims, '0')} = {c0}")
            body = f"tanh({a} * {name}{self.idx(dims, 't')} + {self.term(dims, dtype)})"
            L.append(f"{name}{self.idx(dims, 't+1')} = {body}")
        elif kind == "reverse":
            base = self.term([d for d in dims if d != "t"], dtype)
            L.append(f"{name}{self.idx(dims, 'T-1')} = {base}")
            L.append(f"{name}{self.idx(dims)} = {self.term(dims, dtype)} + 0.9 * "
                     f"{name}{self.idx(dims, 't+1')}")
        elif kind == "window":
            srcs = [s for s in self.tensors if s["dims"] == dims and s["dtype"] != "i32"
                    and not s["vec"]]
            if not srcs:
                L.append(f"{name}{self.idx(dims)} = {self.term(dims, dtype)}")
            else:
                s = r.choice(srcs)
                n = r.randint(1, 3)
                sl = r.choice([f"t:min(t+{n}, T)", f"max(t-{n}, 0):t+1"])
                w = f"sum({s['name']}{self.idx(dims, sl)})"
                if s["dtype"] != dtype:
                    w = f"{dtype}({w})"
                L.append(f"{name}{self.idx(dims)} = {self.term(dims, dtype)} + 0.25 * {w}")
        elif kind == "guarded":
            k = r.randint(1, self.bounds["t"] - 1)
            L.append(f"{name}{self.idx(dims)} = {self.term(dims, dtype)} when t < {k}")
            L.append(f"{name}{self.idx(dims)} = {dtype}(t) * 0.5 + {self.term(dims, dtype)} "
                     f"otherwise")
        elif kind == "tuple":
            q = "q" + name[1:]
            d2 = r.choice(["f32", "f64"])
            L.append(f"({name}, {q}){self.idx(dims)} = ({self.term(dims, dtype)}, "
                     f"{self.term(dims, d2)})")
            self.tensors.append(T)
            T = {"dims": dims, "dtype": d2, "vec": 0, "tlen": self.bounds["t"], "name": q}
        self.tensors.append(T)

    def emit(self, k):
        r = self.r
        dims = r.choice(self.domains)
        fields = []
        for j in range(r.randint(1, 3)):
            s = r.choice(self.tensors)
            want = s["dtype"]
            e = self.read(s, dims, want)
            if e is None:
                continue
            fields.append(f"f{j}: {e}")
        if r.random() < 0.3:  # a whole row as an array
            s = r.choice(self.tensors)
            if "t" in s["dims"] and not s["vec"]:
                idx = [("0:T" if d == "t" else (d if d in dims else "0")) for d in s["dims"]]
                fields.append(f"row: {s['name']}[{', '.join(idx)}]")
        if not fields:
            fields.append("one: 1")
        target = f"[{', '.join(dims)}]" if dims else ""
        self.lines.append(f'emit "e{k}"{target} {{ {", ".join(fields)} }}')

    def program(self):
        r = self.r
        self.bounds = {"t": r.randint(2, 6), "b": r.randint(1, 3), "i": r.randint(1, 3)}
        use_b, use_i = r.random() < 0.6, r.random() < 0.35
        self.domains = [["t"]]
        if use_b:
            self.domains += [["b", "t"], ["b", "t"], ["b"]]
        if use_i:
            self.domains += [["i", "t"]]
        if use_b and use_i:
            self.domains += [["b", "i", "t"]]
        head = [f"// random program (gen_programs.py)"]
        for d in ["b", "i", "t"]:
            if d == "t" or (d == "b" and use_b) or (d == "i" and use_i):
                head.append(f"dim {d} < {DIM_BOUND[d]} = {self.bounds[d]}")
        for _ in range(r.randint(2, 6)):
            self.define()
        for k in range(r.randint(1, 3)):
            self.emit(k)
        return "\n".join(head + [""] + self.lines) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gen_programs.py SEED N OUTDIR")
    seed, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    for k in range(n):
        g = Gen(random.Random(seed * 1000003 + k))
        with open(os.path.join(out, f"prog_{k}.trl"), "w") as f:
            f.write(g.program())


if __name__ == "__main__":
    main()
