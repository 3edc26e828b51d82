"""trl_harness — run a small .trl program through `trlc --interpret` with numpy inputs and read
its saved outputs, for the numpy reference tests of the standard library (test/std/*.py).

run(trlc, body, inputs, outputs) writes every input array to an .npy file, prepends
`load NAME : TYPE from "NAME.npy"` lines and appends `save (o1, o2, …) to "out.npz"` for the
listed output names, runs trlc in a temporary directory and returns the saved arrays in order.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {np.dtype("float32"): "f32", np.dtype("float64"): "f64", np.dtype("int32"): "i32",
          np.dtype("bool"): "bool"}


def trl_type(a):
    a = np.asarray(a)
    t = DTYPES[a.dtype]
    return t + ("[" + ", ".join(str(d) for d in a.shape) + "]" if a.shape else "")


def run(trlc, body, inputs=None, outputs=(), extra_args=(), expect_ok=True):
    inputs = inputs or {}
    with tempfile.TemporaryDirectory() as d:
        lines = []
        for name, a in inputs.items():
            np.save(os.path.join(d, name + ".npy"), np.asarray(a))
            lines.append(f'load {name} : {trl_type(a)} from "{name}.npy"')
        src = "\n".join(lines) + "\n" + body + "\n"
        if outputs:
            src += "save (" + ", ".join(outputs) + ",) to \"out.npz\"\n"
        path = os.path.join(d, "prog.trl")
        with open(path, "w") as f:
            f.write(src)
        p = subprocess.run([trlc, path, "--interpret", *extra_args], cwd=d, capture_output=True,
                           text=True)
        if p.returncode != 0:
            if not expect_ok:
                return p
            sys.stderr.write(src + "\n" + p.stdout + p.stderr)
            raise SystemExit(f"trlc failed with exit code {p.returncode}")
        if not outputs:
            return p
        z = np.load(os.path.join(d, "out.npz"))
        return [z[f"arr_{k}"] for k in range(len(outputs))]


class Checker:
    """Counts checks; each failure prints a line and the run exits 1 at the end."""

    def __init__(self):
        self.failed = 0
        self.count = 0

    def close(self, name, got, want, rtol=0.0, atol=0.0):
        self.count += 1
        got, want = np.asarray(got), np.asarray(want)
        same = got.shape == want.shape
        if not same or not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            self.failed += 1
            err = np.max(np.abs(got.astype(np.float64) - want)) if same else "shape"
            print(f"FAIL {name}: got {got!r} want {want!r} (max err {err})")

    def true(self, name, cond, msg=""):
        self.count += 1
        if not cond:
            self.failed += 1
            print(f"FAIL {name}: {msg}")

    def finish(self, label):
        print(f"{label}: {self.count - self.failed}/{self.count} checks passed")
        sys.exit(1 if self.failed else 0)
