"""std.optim through `trlc --interpret` against numpy re-implementations of torch's formulas
(torch.optim.Adam/AdamW _single_tensor_adam, SGD, clip_grad_norm_, CleanRL's lr annealing), in
f64 over several steps with a tuple of parameters.  Usage: optim_ref.py TRLC"""
import math
import sys

import numpy as np

from trl_harness import Checker, run

trlc = sys.argv[1]
rng = np.random.default_rng(1)
w0 = rng.normal(size=(3, 2))
b0 = rng.normal(size=2)
tw = rng.normal(size=(3, 2))
tb = rng.normal(size=2)
N = 6
lr = 0.05
ck = Checker()


def grad(p):  # gradient of sum(cos(w) * (w - tw)^2) + sum((b - tb)^2 * b)
    w, b = p
    gw = -np.sin(w) * (w - tw) * (w - tw) + np.cos(w) * 2.0 * (w - tw)
    gb = 2.0 * (b - tb) * b + (b - tb) * (b - tb)
    return [gw, gb]


GRAD_TRL = """
fn grad_of(p) = (-sin(p[0]) * (p[0] - tw) * (p[0] - tw) + cos(p[0]) * 2.0 * (p[0] - tw),
                 2.0 * (p[1] - tb) * p[1] + (p[1] - tb) * (p[1] - tb))
"""


def adam_ref(p, steps, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    hist = [p]
    for t in range(1, steps + 1):
        g = grad(p)
        q = []
        for k in range(len(p)):
            x = p[k] * (1 - lr * wd) if wd else p[k]
            m[k] = m[k] + (1 - b1) * (g[k] - m[k])           # exp_avg.lerp_(grad, 1 - beta1)
            v[k] = v[k] * b2 + (1 - b2) * (g[k] * g[k])      # mul_(beta2).addcmul_(g, g, 1-beta2)
            bc1 = 1 - b1 ** t
            bc2 = 1 - b2 ** t
            step_size = lr / bc1
            denom = np.sqrt(v[k]) / math.sqrt(bc2) + eps
            q.append(x - step_size * (m[k] / denom))
        p = q
        hist.append(p)
    return hist, m, v


dim = "dim i < I = %d\n" % N
inputs = dict(w0=w0, b0=b0, tw=tw, tb=tb)

# ---- Adam and AdamW: (net, opt)[i+1] = optim.adam(...) recurrences
for name, call, wd in [("adam", "optim.adam(net[i], grad_of(net[i]), opt[i], 0.05)", 0.0),
                       ("adamw", "optim.adamw(net[i], grad_of(net[i]), opt[i], 0.05, 0.1)", 0.1)]:
    body = "import std.optim\n" + dim + GRAD_TRL + f"""
net[0] = (w0, b0)
opt[0] = optim.adam_init(net[0])
(net, opt)[i+1] = {call}
"""
    outs = [f"net[{k}][{j}]" for k in range(N + 1) for j in range(2)]
    outs += ["opt[%d][0][0]" % N, "opt[%d][1][1]" % N, "opt[%d][2]" % N]
    r = run(trlc, body, inputs, outs)
    hist, m, v = adam_ref([w0, b0], N, lr, wd=wd)
    for k in range(N + 1):
        for j in range(2):
            ck.close(f"{name} step {k} leaf {j}", r[2 * k + j], hist[k][j], rtol=1e-14, atol=1e-15)
    ck.close(f"{name} m", r[-3], m[0], rtol=1e-14, atol=1e-16)
    ck.close(f"{name} v", r[-2], v[1], rtol=1e-14, atol=1e-16)
    ck.close(f"{name} step count", r[-1], float(N))
    ck.true(f"{name} step count dtype", r[-1].dtype == np.float64, str(r[-1].dtype))

# ---- f32 parameters keep f32 (state and step too)
body = "import std.optim\n" + """
p32 = (f32(w0), f32(b0))
st = optim.adam_init(p32)
(p1, st1) = optim.adam(p32, p32, st, 0.01)
"""
# (a tuple equation without a domain)
r = run(trlc, body.replace("(p1, st1) = ", "u = "), inputs, ["u[0][0]", "u[1][2]"])
ck.true("adam f32 keeps f32", r[0].dtype == np.float32 and r[1].dtype == np.float32,
        f"{r[0].dtype} {r[1].dtype}")
# one Adam step from zero state moves each parameter by lr·g/(|g| + eps·...) ≈ lr·sign(g)
ck.close("adam f32 first step", r[0], (w0 - 0.01 * np.sign(w0)).astype(np.float32), rtol=1e-5)

# ---- SGD, clipping, annealing
g = [rng.normal(size=(3, 2)) * 3, rng.normal(size=2) * 3]
body = "import std.optim\n" + """
p = (w0, b0)
gg = (g0, g1)
s = optim.sgd(p, gg, 0.1)
n = optim.global_norm(gg)
c = optim.clip_by_global_norm(gg, 0.5)
c_big = optim.clip_by_global_norm(gg, 1000.0)
dim i < I = 4
lr[i] = optim.linear_anneal(2.5e-4, i, 4)
"""
r = run(trlc, body, dict(w0=w0, b0=b0, g0=g[0], g1=g[1]),
        ["s[0]", "s[1]", "n", "c[0]", "c[1]", "c_big[0]", "lr[0]", "lr[3]"])
ck.close("sgd w", r[0], w0 - 0.1 * g[0])
ck.close("sgd b", r[1], b0 - 0.1 * g[1])
norm = math.sqrt(np.sum(g[0] ** 2) + np.sum(g[1] ** 2))
ck.close("global norm", r[2], norm, rtol=1e-15)
coef = min(0.5 / (norm + 1e-6), 1.0)
ck.close("clip w", r[3], g[0] * coef, rtol=1e-15)
ck.close("clip b", r[4], g[1] * coef, rtol=1e-15)
ck.close("clip above max_norm is identity", r[5], g[0])
# CleanRL: frac = 1 - (update - 1) / num_updates, update = i + 1
ck.close("anneal i=0", r[6], np.float32(2.5e-4), rtol=1e-7)
ck.close("anneal i=3", r[7], np.float32((1 - 3 / 4) * 2.5e-4), rtol=1e-7)
ck.finish("std.optim")
