"""blas_check.py TRLC CXX PROGRAM.trl — the matrix products of PROGRAM (test/lit/codegen/
blas-products.trl) built for the host with and without BLAS (trlc -o --target=host, with
CXX as $CXX), run, and compared with `trlc --interpret`:

  * the BLAS build prints the same bytes with --threads 1, --threads 2 and again --threads 2;
  * the -fno-blas build prints the bytes of --interpret;
  * in the BLAS build the inputs (w, x, xm) and the loop-sized product `small` equal the
    interpreter's exactly, and every product through trl_gemm is within dsl/README §7.7's
    tolerance of the interpreter's: |a - b| <= 2·γ_K · Σ_k |x_k| |w_kj|, γ_K = K·u / (1 - K·u),
    u the unit roundoff of the dtype (the bound that every summation order meets, twice);
  * h = t @ transpose(w) (t computed by each side) is within γ_K · Σ|t||w| of the exact
    product of that side's own t and w (numpy in float64; f32 inputs are exact there).

Prints one line per check; "FAIL: ..." and exit 1 when one does not hold."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

trlc, cxx, prog = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
work = tempfile.mkdtemp(prefix="trlc-blas-check-")
env = dict(os.environ, CXX=cxx)
failed = False


def fail(msg):
    global failed
    failed = True
    print("FAIL: " + msg)


def build(name, extra):
    exe = os.path.join(work, name)
    subprocess.run([trlc, prog, "--target=host", "-o", exe] + extra, check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return exe


def run(cmd):
    p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return p.stdout


blas = build("blas", [])
noblas = build("noblas", ["-fno-blas"])
runs = [run([blas, "--quiet", "--threads", "1"]), run([blas, "--quiet", "--threads", "2"]),
        run([blas, "--quiet", "--threads", "2"])]
if runs[0] == runs[1] == runs[2]:
    print("identical: --threads 1, --threads 2, a second run")
else:
    fail("the BLAS build's output depends on the threads or the run")
interp = run([trlc, prog, "--interpret"])
if run([noblas, "--quiet"]) == interp:
    print("same bytes: -fno-blas and --interpret")
else:
    fail("-fno-blas differs from --interpret")

gen = json.loads(runs[0].decode().splitlines()[0])
ref = json.loads(interp.decode().splitlines()[0])
for k in ["w", "x", "xm", "small"]:
    if gen[k] == ref[k]:
        print("exact: " + k)
    else:
        fail(k + " differs from --interpret")

U32, U64 = 2.0 ** -24, 2.0 ** -53


def gamma(k, u):
    return k * u / (1 - k * u)


def arr(v):
    return np.array(v, dtype=np.float64)


def check_pair(name, a, b, xs, w, u):
    """a, b: two computations of xs @ w (last axis K)."""
    k = w.shape[0]
    bound = 2 * gamma(k, u) * (np.abs(xs) @ np.abs(w))
    err = np.abs(arr(a) - arr(b))
    if np.all(err <= bound):
        print("within tolerance of --interpret: " + name)
    else:
        fail(f"{name}: |gen - interp| exceeds the bound (worst ratio {np.max(err / bound):.3g})")


w = arr(ref["w"])
check_pair("y [40, 64] x [64, 96]", gen["y"], ref["y"], arr(ref["x"]), w, U32)
check_pair("m [120, 64] x [64, 96]", gen["m"], ref["m"], arr(ref["xm"]), w, U32)
check_pair("g [96, 64]^T x [64, 64] (trl_gemm_tn)", gen["g"], ref["g"], w.T, arr(ref["q"]), U32)
check_pair("yd (f64) [40, 64] x [64, 96]", gen["yd"], ref["yd"], arr(ref["x"]), w, U64)
for side, d in [("BLAS build", gen), ("--interpret", ref)]:
    t = arr(d["t"])
    exact = t @ w.T
    bound = gamma(w.shape[1], U32) * (np.abs(t) @ np.abs(w.T))
    if np.all(np.abs(arr(d["h"]) - exact) <= bound):
        print("h within tolerance of the exact product: " + side)
    else:
        fail("h of the " + side + " is not within the bound of t @ transpose(w)")
sys.exit(1 if failed else 0)
