"""check_attention_grad.py DIR | OUT.jsonl (test/lit/programs/attention-grad.test) — with a
directory, writes the input of Inputs/attention-grad.trl there (x.npy, a fixed seed; also
tools/gpu_check.py's convention for a program's input script); with the program's output, checks
its loss and gradients against PyTorch's autograd in float64, from the same input (x.npy in the
working directory) and the program's own weights (emitted with them)."""
import json
import os
import sys

import numpy as np

if os.path.isdir(sys.argv[1]):
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.save(os.path.join(sys.argv[1], "x.npy"), x)
    sys.exit(0)

import torch  # noqa: E402

r = json.loads(open(sys.argv[1]).readline())
x = torch.tensor(np.load("x.npy"), dtype=torch.float64)
w = [torch.tensor(r[k], dtype=torch.float64, requires_grad=True) for k in ("wq", "wk", "wv")]
q, k, v = x @ w[0], x @ w[1], x @ w[2]
loss = 0.0
for t in range(x.shape[0]):
    att = torch.softmax(k[: t + 1] @ q[t] / 2.0, 0)
    o = att @ v[: t + 1]
    loss = loss + (o * o).sum() + (att * torch.arange(t + 1, dtype=torch.float64)).sum()
loss.backward()
errs = [float((wk.grad - torch.tensor(r[g], dtype=torch.float64)).abs().max()) for wk, g in zip(w, ("gq", "gk", "gv"))]
total = loss.item()
assert abs(total - r["loss"]) < 1e-4 * max(1.0, abs(total)), (total, r["loss"])
assert max(errs) < 1e-4, errs
print(f"ok: loss and the gradients of wq, wk, wv equal PyTorch's within 1e-4 (max {max(errs):.1e})")
