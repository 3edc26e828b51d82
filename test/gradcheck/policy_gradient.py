#!/usr/bin/env python3
"""REINFORCE losses (LANGUAGE.md §7) through two policies, differentiated by trlc and by two
independent references: PyTorch (CPU) autograd and a hand-written numpy backward pass.

    policy_gradient.py TRLC DIR [--require-torch]

Two programs (written to DIR/mlp/pg.trl and DIR/rnn/pg.trl) each run I = 3 iterations of SGD on
`loss[i] = -mean(logp[0:B, i, 0:T] * stop_grad(ret[0:B, i, 0:T]))`, with actions sampled by
`categorical` (emitted, so the references use the same ones) and discounted returns from loaded
rewards (a reverse recurrence over t, under stop_grad):

    mlp   logits from a 2-hidden-layer tanh MLP on each loaded observation (no recurrence in
          the policy: the gradient sums over b and t);
    rnn   logits from a tanh RNN over t, h[t+1] = tanh(o[t] Wx + h[t] Wh + bh) from a learned
          h[0], so the gradient of Wx, Wh, bh and h0 is backprop through time.

Per iteration each reference recomputes the loss and the gradient of every parameter from the
parameters it has itself updated; all must agree with trlc within 1e-10 (relative, f64).
Prints one line per program and reference,

    <program>: matches <reference> on N iterations (largest relative difference D)

or the first mismatch and exits 1.  Without torch the numpy reference alone is checked (a note
says so), unless --require-torch, which makes a missing torch an error (exit 1).
"""
import json
import os
import subprocess
import sys

import numpy as np

B, I, T, H, GAMMA, LR = 4, 3, 6, 8, 0.9, 0.1
TOL = 1e-10

HEADER = """
dim i < I = %(I)d
dim b < B = %(B)d
dim t < T = %(T)d
load obs : f64[%(B)d, %(I)d, %(T)d, 4] from "obs.npy"
load rew : f64[%(B)d, %(I)d, %(T)d] from "rew.npy"
"""

# The loss, its gradient and the SGD step shared by both programs (after `logits` is defined).
TAIL = """
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
"""

MLP_SHAPES = [(4, H), (H,), (H, H), (H,), (H, 2), (2,)]
MLP_BODY = """
load p0 : (f64[4, %(H)d], f64[%(H)d], f64[%(H)d, %(H)d], f64[%(H)d], f64[%(H)d, 2], f64[2]) from "net.npz"
fn mlp(n, o) = tanh(tanh(o @ n[0] + n[1]) @ n[2] + n[3]) @ n[4] + n[5]
net[0] = p0
logits[b, i, t] = mlp(net[i], obs[b][i][t])
"""

# Parameters: Wx [4, H], Wh [H, H], bh [H], Wo [H, 2], bo [2], h0 [H].
RNN_SHAPES = [(4, H), (H, H), (H,), (H, 2), (2,), (H,)]
RNN_BODY = """
load p0 : (f64[4, %(H)d], f64[%(H)d, %(H)d], f64[%(H)d], f64[%(H)d, 2], f64[2], f64[%(H)d]) from "net.npz"
net[0] = p0
h[b, i, 0] = net[i][5]
h[b, i, t+1] = tanh(obs[b][i][t] @ net[i][0] + h[b, i, t] @ net[i][1] + net[i][2])
logits[b, i, t] = h[b, i, t+1] @ net[i][3] + net[i][4]
"""


def program(body):
    return (HEADER + body + TAIL) % dict(B=B, I=I, T=T, H=H, GAMMA=GAMMA, LR=LR)


def returns(rew):
    ret = np.zeros_like(rew)
    ret[..., -1] = rew[..., -1]
    for t in range(rew.shape[-1] - 2, -1, -1):
        ret[..., t] = rew[..., t] + GAMMA * ret[..., t + 1]
    return ret


def dlogits(lg, a, R, n):
    """(loss terms' logp, d loss / d logits) for logits lg [N, 2], actions a, returns R, mean
    over n terms."""
    m = lg.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(lg - m).sum(axis=1))
    logp = lg[np.arange(lg.shape[0]), a] - lse
    sm = np.exp(lg - lse[:, None])
    return logp, (-R / n)[:, None] * (np.eye(2)[a] - sm)


def mlp_numpy(params, o, a, R):
    """loss and gradients by a hand-written backward pass (o: [B, T, 4], a, R: [B, T])."""
    W1, b1, W2, b2, W3, b3 = params
    o, a, R = o.reshape(-1, 4), a.reshape(-1), R.reshape(-1)
    h1 = np.tanh(o @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    logp, dlg = dlogits(h2 @ W3 + b3, a, R, o.shape[0])
    loss = -np.mean(logp * R)
    dW3, db3 = h2.T @ dlg, dlg.sum(0)
    dz2 = (dlg @ W3.T) * (1 - h2 * h2)
    dW2, db2 = h1.T @ dz2, dz2.sum(0)
    dz1 = (dz2 @ W2.T) * (1 - h1 * h1)
    dW1, db1 = o.T @ dz1, dz1.sum(0)
    return loss, [dW1, db1, dW2, db2, dW3, db3]


def rnn_numpy(params, o, a, R):
    """loss and gradients by hand-written backprop through time (o: [B, T, 4], a, R: [B, T])."""
    Wx, Wh, bh, Wo, bo, h0 = params
    nb, nt = a.shape
    hs = [np.broadcast_to(h0, (nb, H))]
    for t in range(nt):
        hs.append(np.tanh(o[:, t] @ Wx + hs[t] @ Wh + bh))
    loss, dlgs = 0.0, []
    for t in range(nt):
        logp, dlg = dlogits(hs[t + 1] @ Wo + bo, a[:, t], R[:, t], nb * nt)
        loss -= np.sum(logp * R[:, t]) / (nb * nt)
        dlgs.append(dlg)
    g = [np.zeros_like(p) for p in params]
    dh = np.zeros((nb, H))  # d loss / d h[t+1], from the steps after t+1
    for t in range(nt - 1, -1, -1):
        g[3] += hs[t + 1].T @ dlgs[t]
        g[4] += dlgs[t].sum(0)
        dz = (dh + dlgs[t] @ Wo.T) * (1 - hs[t + 1] ** 2)
        g[0] += o[:, t].T @ dz
        g[1] += hs[t].T @ dz
        g[2] += dz.sum(0)
        dh = dz @ Wh.T
    g[5] = dh.sum(0)
    return loss, g


def torch_reference(torch, forward):
    """A reference by torch autograd: forward(params as tensors, o, a, R) -> logits [B, T, 2]."""
    def ref(params, o, a, R):
        ps = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
        lg = forward(torch, ps, torch.tensor(o, dtype=torch.float64))
        logp = torch.log_softmax(lg, dim=-1).gather(-1, torch.tensor(a)[..., None])[..., 0]
        loss = -(logp * torch.tensor(R, dtype=torch.float64)).mean()
        grads = torch.autograd.grad(loss, ps)
        return loss.item(), [x.numpy() for x in grads]
    return ref


def mlp_torch(torch, ps, x):
    W1, b1, W2, b2, W3, b3 = ps
    return torch.tanh(torch.tanh(x @ W1 + b1) @ W2 + b2) @ W3 + b3


def rnn_torch(torch, ps, x):
    Wx, Wh, bh, Wo, bo, h0 = ps
    h, out = h0.expand(x.shape[0], H), []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ Wx + h @ Wh + bh)
        out.append(h @ Wo + bo)
    return torch.stack(out, dim=1)


def check(name, lines, params, obs, R, ref):
    """Compares trlc's emitted lines with ref; returns (ok, message)."""
    worst = 0.0
    for i, line in enumerate(lines):
        a = np.array(line["act"]).reshape(B, T)
        loss, grads = ref(params, obs[:, i], a, R[:, i])
        ours = [np.array(x) for x in line["g"]]
        if not abs(loss - line["loss"]) <= TOL * abs(loss):
            return False, "iteration %d: loss %r, reference %r" % (i, line["loss"], loss)
        worst = max(worst, abs(loss - line["loss"]) / abs(loss))
        for k, (g, h) in enumerate(zip(ours, grads)):
            if g.shape != h.shape:
                return False, "iteration %d: gradient of parameter %d has shape %s, reference %s" % (
                    i, k, g.shape, h.shape)
            err = np.max(np.abs(g - h)) / max(np.max(np.abs(h)), 1e-300)
            if not err <= TOL:
                return False, "iteration %d: gradient of parameter %d differs (relative %g)" % (
                    i, k, err)
            worst = max(worst, err)
        params = [p - LR * h for p, h in zip(params, grads)]
    return True, "matches %s on %d iterations (largest relative difference %.1e)" % (
        name, len(lines), worst)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    trlc, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    require_torch = "--require-torch" in sys.argv[3:]
    try:
        import torch
    except ImportError:
        torch = None
        if require_torch:
            print("torch is not installed (`pip install torch`, as tools/setup.sh does)")
            return 1
        print("note: torch is not installed; checking the numpy reference only")
    rng = np.random.default_rng(5)
    obs = rng.normal(size=(B, I, T, 4))
    rew = rng.uniform(0, 1, size=(B, I, T))
    R = returns(rew)
    cases = [("MLP policy", MLP_BODY, MLP_SHAPES, mlp_numpy, mlp_torch),
             ("tanh RNN policy over t (backprop through time)", RNN_BODY, RNN_SHAPES, rnn_numpy,
              rnn_torch)]
    for name, body, shapes, np_ref, torch_fwd in cases:
        params = [rng.normal(size=s) * 0.5 for s in shapes]
        work = os.path.join(root, "mlp" if body is MLP_BODY else "rnn")
        os.makedirs(work, exist_ok=True)
        np.savez(os.path.join(work, "net.npz"), *params)
        np.save(os.path.join(work, "obs.npy"), obs)
        np.save(os.path.join(work, "rew.npy"), rew)
        with open(os.path.join(work, "pg.trl"), "w") as f:
            f.write(program(body))
        r = subprocess.run([trlc, "pg.trl", "--interpret"], cwd=work, capture_output=True,
                           text=True)
        if r.returncode != 0:
            print("%s: trlc failed: %s" % (name, r.stderr))
            return 1
        lines = [json.loads(l) for l in r.stdout.splitlines()]
        if len(lines) != I:
            print("%s: trlc emitted %d lines, expected %d" % (name, len(lines), I))
            return 1
        refs = [("the numpy backward pass", np_ref)]
        if torch is not None:
            refs.insert(0, ("PyTorch %s autograd" % torch.__version__,
                            torch_reference(torch, torch_fwd)))
        for ref_name, ref in refs:
            ok, msg = check(ref_name, lines, params, obs, R, ref)
            print("%s: %s" % (name, msg))
            if not ok:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
