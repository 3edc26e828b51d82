#!/usr/bin/env python3
"""The REINFORCE loss of LANGUAGE.md §7 through a 2-hidden-layer tanh MLP policy, differentiated
by trlc and by a reference: PyTorch (CPU) autograd when `import torch` works, else a
hand-written numpy backward pass (printed as which reference was used).

    policy_gradient.py TRLC DIR [--require-torch]

The program (written to DIR/pg.trl) runs I = 3 iterations of SGD on
`loss[i] = -mean(logp[0:B, i, 0:T] * stop_grad(ret[0:B, i, 0:T]))`, with logits from the MLP on
loaded observations, actions sampled by `categorical` (emitted, so the reference uses the same
ones), discounted returns from loaded rewards (a reverse recurrence, under stop_grad).  Per
iteration the reference recomputes the loss and the gradient of every parameter from the
parameters it has itself updated; all must agree within 1e-10 (relative, f64).  Prints
"policy gradient: matches <reference> on N iterations" or the first mismatch (exit 1).
"""
import json
import os
import subprocess
import sys

import numpy as np

B, I, T, H, GAMMA, LR = 4, 3, 6, 8, 0.9, 0.1

PROGRAM = """
dim i < I = %(I)d
dim b < B = %(B)d
dim t < T = %(T)d
load p0 : (f64[4, %(H)d], f64[%(H)d], f64[%(H)d, %(H)d], f64[%(H)d], f64[%(H)d, 2], f64[2]) from "net.npz"
load obs : f64[%(B)d, %(I)d, %(T)d, 4] from "obs.npy"
load rew : f64[%(B)d, %(I)d, %(T)d] from "rew.npy"
fn mlp(n, o) = tanh(tanh(o @ n[0] + n[1]) @ n[2] + n[3]) @ n[4] + n[5]
net[0] = p0
logits[b, i, t] = mlp(net[i], obs[b][i][t])
act[b, i, t] = categorical(rng(b, i, t), logits[b, i, t])
ret[b, i, T-1] = rew[b][i][T-1]
ret[b, i, t] = rew[b][i][t] + %(GAMMA)r * ret[b, i, t+1]
logp[b, i, t] = log_softmax(logits[b, i, t])[act[b, i, t]]
loss[i] = -mean(logp[0:B, i, 0:T] * stop_grad(ret[0:B, i, 0:T]))
g[i] = grad(loss[i], net[i])
net[i+1] = (net[i][0] - %(LR)r * g[i][0], net[i][1] - %(LR)r * g[i][1],
            net[i][2] - %(LR)r * g[i][2], net[i][3] - %(LR)r * g[i][3],
            net[i][4] - %(LR)r * g[i][4], net[i][5] - %(LR)r * g[i][5])
emit "pg"[i] { loss: loss[i], g: g[i], act: act[0:B, i, 0:T] }
""" % dict(B=B, I=I, T=T, H=H, GAMMA=GAMMA, LR=LR)


def returns(rew):
    ret = np.zeros_like(rew)
    ret[..., -1] = rew[..., -1]
    for t in range(rew.shape[-1] - 2, -1, -1):
        ret[..., t] = rew[..., t] + GAMMA * ret[..., t + 1]
    return ret


def numpy_reference(params, o, a, R):
    """loss and gradients by a hand-written backward pass (o: [N, 4], a: [N], R: [N])."""
    W1, b1, W2, b2, W3, b3 = params
    n = o.shape[0]
    h1 = np.tanh(o @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    lg = h2 @ W3 + b3
    m = lg.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(lg - m).sum(axis=1))
    logp = lg[np.arange(n), a] - lse
    loss = -np.mean(logp * R)
    dlogp = -R / n
    sm = np.exp(lg - lse[:, None])
    dlg = dlogp[:, None] * (np.eye(2)[a] - sm)
    dW3, db3 = h2.T @ dlg, dlg.sum(0)
    dz2 = (dlg @ W3.T) * (1 - h2 * h2)
    dW2, db2 = h1.T @ dz2, dz2.sum(0)
    dz1 = (dz2 @ W2.T) * (1 - h1 * h1)
    dW1, db1 = o.T @ dz1, dz1.sum(0)
    return loss, [dW1, db1, dW2, db2, dW3, db3]


def torch_reference(torch, params, o, a, R):
    ps = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    W1, b1, W2, b2, W3, b3 = ps
    x = torch.tensor(o, dtype=torch.float64)
    lg = torch.tanh(torch.tanh(x @ W1 + b1) @ W2 + b2) @ W3 + b3
    logp = torch.log_softmax(lg, dim=1)[torch.arange(o.shape[0]), torch.tensor(a)]
    loss = -(logp * torch.tensor(R, dtype=torch.float64)).mean()
    grads = torch.autograd.grad(loss, ps)
    return float(loss), [g.numpy() for g in grads]


def main():
    trlc, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    require_torch = "--require-torch" in sys.argv
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(5)
    shapes = [(4, H), (H,), (H, H), (H,), (H, 2), (2,)]
    params = [rng.normal(size=s) * 0.5 for s in shapes]
    obs = rng.normal(size=(B, I, T, 4))
    rew = rng.uniform(0, 1, size=(B, I, T))
    np.savez(os.path.join(root, "net.npz"), *params)
    np.save(os.path.join(root, "obs.npy"), obs)
    np.save(os.path.join(root, "rew.npy"), rew)
    with open(os.path.join(root, "pg.trl"), "w") as f:
        f.write(PROGRAM)
    r = subprocess.run([trlc, "pg.trl", "--interpret"], cwd=root, capture_output=True, text=True)
    if r.returncode != 0:
        print("trlc failed:", r.stderr)
        return 1
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    try:
        import torch
        ref_name, ref = "PyTorch %s autograd" % torch.__version__, (
            lambda p, o, a, R: torch_reference(torch, p, o, a, R))
    except ImportError:
        if require_torch:
            print("torch is not installed (pip install torch --index-url "
                  "https://download.pytorch.org/whl/cpu)")
            return 1
        ref_name, ref = "numpy backward pass (torch not installed)", numpy_reference
    R = returns(rew)
    for i, line in enumerate(lines):
        a = np.array(line["act"]).reshape(-1)
        o = obs[:, i].reshape(-1, 4)
        loss, grads = ref(params, o, a, R[:, i].reshape(-1))
        ours = [np.array(x) for x in line["g"]]
        if not abs(loss - line["loss"]) <= 1e-10 * abs(loss):
            print("iteration %d: loss %r, reference %r" % (i, line["loss"], loss))
            return 1
        for k, (g, h) in enumerate(zip(ours, grads)):
            err = np.max(np.abs(g - h)) / max(np.max(np.abs(h)), 1e-300)
            if not err <= 1e-10:
                print("iteration %d: gradient of parameter %d differs (relative %g)" % (i, k, err))
                return 1
        params = [p - LR * h for p, h in zip(params, grads)]
    print("policy gradient: matches %s on %d iterations" % (ref_name, len(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
