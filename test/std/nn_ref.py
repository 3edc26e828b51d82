"""std.nn, orthogonal and permutation through `trlc --interpret`: orthogonality (QᵀQ = I within
1e-6 in f32), numpy's QR of the same f64 normal draws (dsl/README.md §8), gain scaling, keys,
layer shapes, mlp forward passes against numpy, glorot bounds, permutation uniformity.
Usage: nn_ref.py TRLC"""
import collections
import math
import sys

import numpy as np

from trl_harness import Checker, run

trlc = sys.argv[1]
ck = Checker()


def ortho_ref(a, rows, cols, gain):
    q, r = np.linalg.qr(a)  # a: [max, min]
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)
    return (q if rows >= cols else q.T) * gain


body = """
w = (orthogonal(rng(1), [5, 3], dtype=f64), normal(rng(1), [5, 3], dtype=f64),
     orthogonal(rng(1), [3, 5], gain=2.0, dtype=f64),
     orthogonal(rng(2), [64, 64]), orthogonal(rng(2), [64, 64], gain=1.4142135623730951),
     orthogonal(rng(3), [64, 4]), orthogonal(rng(4), [4, 64], gain=0.01),
     orthogonal(rng(2), [64, 64]), orthogonal(rng(5), [64, 64]))
"""
r = run(trlc, body, {}, [f"w[{k}]" for k in range(9)])
w53, a53, w35, w64, w64g, w644, w464, w64b, w64c = r
ck.close("orthogonal [5,3] = numpy QR of the same draws", w53, ortho_ref(a53, 5, 3, 1.0),
         atol=1e-12)
ck.close("orthogonal [3,5] gain 2 = numpy QR (transposed)", w35, ortho_ref(a53, 3, 5, 2.0),
         atol=1e-12)
ck.true("orthogonal default dtype f32", w64.dtype == np.float32, str(w64.dtype))
for name, m, tall in [("64x64", w64, True), ("64x4", w644, True),
                      ("4x64 / 0.01", w464 / 0.01, False)]:
    m = m.astype(np.float64)
    g = m.T @ m if tall else m @ m.T
    ck.close(f"orthogonal {name}: Q^T Q = I", g, np.eye(g.shape[0]), atol=1e-6)
ck.close("gain sqrt(2) scales", w64g, (w64.astype(np.float64) * math.sqrt(2)).astype(np.float32),
         rtol=1e-6)
ck.true("same key, same bits", np.array_equal(w64, w64b))
ck.true("different keys differ", not np.allclose(w64, w64c))

# ---- layers, mlp, init
x = np.random.default_rng(3).normal(size=(7, 4)).astype(np.float32)
body = """
import std.nn
actor = nn.mlp_init(rng(0), [4, 64, 64, 2], [nn.sqrt2, nn.sqrt2, 0.01])
critic = nn.mlp_init_default(rng(1), [4, 64, 64, 1])
small = nn.mlp1_init(rng(2), [4, 8, 3], [1.0, 1.0])
gl = nn.glorot_mlp_init(rng(3), [4, 16, 16, 2])
ya = nn.mlp(actor, x)
yr = nn.mlp_relu(actor, x)
y1 = nn.mlp1(small, x[0])
lin = nn.linear(actor[0], x)
"""
outs = [f"actor[{l}][{j}]" for l in range(3) for j in range(2)]
outs += ["critic[2][0]", "small[0][0]", "small[1][0]", "gl[0][0]", "gl[1][0]",
         "ya", "yr", "y1", "lin"]
r = run(trlc, body, dict(x=x), outs)
aw = [(r[2 * l].astype(np.float64), r[2 * l + 1].astype(np.float64)) for l in range(3)]
ck.true("actor shapes", [p[0].shape for p in aw] == [(4, 64), (64, 64), (64, 2)] and
        [p[1].shape for p in aw] == [(64,), (64,), (2,)], str([p[0].shape for p in aw]))
ck.true("biases are zero", all(not p[1].any() for p in aw))
for l, gain in enumerate([math.sqrt(2), math.sqrt(2), 0.01]):
    W = aw[l][0] / gain
    g = W @ W.T if W.shape[0] < W.shape[1] else W.T @ W
    ck.close(f"actor layer {l}: orthogonal with gain {gain:.4g}", g, np.eye(g.shape[0]), atol=1e-6)
crit_w, s0, s1, g0, g1, ya, yr, y1, lin = r[6:]
ck.close("critic last layer gain 1.0", np.linalg.norm(crit_w.astype(np.float64)), 1.0, atol=1e-6)
ck.true("mlp1_init shapes", s0.shape == (4, 8) and s1.shape == (8, 3), f"{s0.shape} {s1.shape}")
a0 = math.sqrt(6.0 / (4 + 16))
ck.true("glorot bounds",
        g0.shape == (4, 16) and np.abs(g0).max() <= a0 and np.abs(g0).max() > 0.5 * a0,
        str(np.abs(g0).max()))
ck.true("glorot layers differ", g1.shape == (16, 16) and not np.allclose(g0[:, :4], g1[:4, :4]))


def mlp_np(params, x, act):
    h = x.astype(np.float64)
    for l, (W, b) in enumerate(params):
        h = h @ W + b
        if l < len(params) - 1:
            h = act(h)
    return h


ck.close("mlp tanh forward", ya, mlp_np(aw, x, np.tanh), rtol=1e-4, atol=1e-6)
ck.close("mlp relu forward", yr, mlp_np(aw, x, lambda h: np.maximum(h, 0)), rtol=1e-4, atol=1e-6)
ck.close("linear", lin, x.astype(np.float64) @ aw[0][0] + aw[0][1], rtol=1e-5, atol=1e-6)
small_p = [(s0.astype(np.float64), np.zeros(8)), (s1.astype(np.float64), np.zeros(3))]
ck.close("mlp1 on one row", y1, mlp_np(small_p, x[0], np.tanh), rtol=1e-5, atol=1e-6)

# ---- transformer blocks: layer_norm over the last axis of any rank, gelu_tanh, positions, and
# the gradient of layer_norm (in f64, against central differences of the numpy formula)
x3 = np.random.default_rng(4).normal(size=(2, 3, 8)) * 3 + 1
g8, b8 = 1 + 0.1 * np.arange(8), 0.05 * np.arange(8) - 0.2
c3 = np.random.default_rng(5).normal(size=(2, 3, 8))
body = """
import std.nn
l1 = nn.layer_norm(f32(x3[0, 0]), f32(g8), f32(b8))
l2 = nn.layer_norm(f32(x3[0]), f32(g8), f32(b8))
l3 = nn.layer_norm(f32(x3), f32(g8), f32(b8))
le = nn.layer_norm_eps(x3, g8, b8, 0.5)
ge = nn.gelu_tanh(f32(x3[0]))
pe = (nn.sinusoidal_position(0, 8), nn.sinusoidal_position(5, 8), nn.sinusoidal_position(99999, 6))
dx = grad(sum(nn.layer_norm(x3, g8, b8) * c3), x3)
"""
r = run(trlc, body, dict(x3=x3, g8=g8, b8=b8, c3=c3), ["l1", "l2", "l3", "le", "ge", "pe[0]", "pe[1]", "pe[2]", "dx"])
l1, l2, l3, le, ge, pe0, pe5, pe_big, dx = r


def ln_np(x, g, b, eps=1e-5):  # torch F.layer_norm: biased variance over the last axis
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + eps) * g + b


x32 = x3.astype(np.float32).astype(np.float64)
ck.close("layer_norm of a vector", l1, ln_np(x32[0, 0], g8, b8), atol=2e-6)
ck.close("layer_norm of rows [3, 8]", l2, ln_np(x32[0], g8, b8), atol=2e-6)
ck.close("layer_norm of [2, 3, 8]", l3, ln_np(x32, g8, b8), atol=2e-6)
ck.true("layer_norm keeps f32", l3.dtype == np.float32 and l3.shape == (2, 3, 8), f"{l3.dtype} {l3.shape}")
ck.close("layer_norm_eps 0.5 in f64", le, ln_np(x3, g8, b8, 0.5), atol=1e-14)
ck.close("gelu_tanh = torch gelu(approximate='tanh')", ge,
         0.5 * x32[0] * (1 + np.tanh(math.sqrt(2 / math.pi) * (x32[0] + 0.044715 * x32[0] ** 3))), atol=2e-6)


def pe_np(t, n):  # Vaswani et al. 2017 §3.5: PE(t, 2i) = sin(t / 10000^(2i/n)), PE(t, 2i+1) = cos(...)
    i = np.arange(n)
    a = t / 10000.0 ** ((i - i % 2) / n)
    return np.where(i % 2 == 0, np.sin(a), np.cos(a))


ck.close("sinusoidal_position(0) = [0, 1, 0, 1, ...]", pe0, pe_np(0, 8), atol=0)
ck.close("sinusoidal_position(5)", pe5, pe_np(5, 8), atol=2e-6)
ck.close("sinusoidal_position(99999): f32 angles", pe_big, pe_np(99999, 6), atol=1e-3)
num = np.zeros_like(x3)
for idx in np.ndindex(*x3.shape):
    e = np.zeros_like(x3)
    e[idx] = 1e-6
    num[idx] = ((ln_np(x3 + e, g8, b8) * c3).sum() - (ln_np(x3 - e, g8, b8) * c3).sum()) / 2e-6
ck.close("grad of layer_norm (f64) = central differences", dx, num, atol=1e-7)

# ---- permutation: a permutation, reproducible, roughly uniform over keys
body = """
dim j < J = 600
p3[j] = permutation(rng(j), 3)
p50 = (permutation(rng(7), 50), permutation(rng(7), 50), permutation(rng(8), 50))
"""
outs = ["p3[0:J]", "p50[0]", "p50[1]", "p50[2]"]
r = run(trlc, body, {}, outs)
p3, a, b, c = r
ck.true("permutation dtype i32", a.dtype == np.int32, str(a.dtype))
ck.true("permutation(50) is a permutation", sorted(a.tolist()) == list(range(50)))
ck.true("same key, same permutation", np.array_equal(a, b))
ck.true("different keys, different permutations", not np.array_equal(a, c))
counts = collections.Counter(tuple(p) for p in p3.tolist())
ck.true("all 6 permutations of 3 appear", len(counts) == 6 and
        all(sorted(k) == [0, 1, 2] for k in counts), str(counts))
chi2 = sum((n - 100) ** 2 / 100 for n in counts.values())
ck.true("permutations of 3 uniform (chi2 < 20.5, p = 0.001)", chi2 < 20.5, f"chi2 = {chi2}")
ck.finish("std.nn / orthogonal / permutation")
