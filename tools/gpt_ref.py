"""gpt_ref.py — weights and a PyTorch reference for samples/transformer_decode.trl.

  gpt_ref.py make DIR [PROGRAM.trl]          write DIR/<the program's .npz> from a fixed seed
  gpt_ref.py check DIR OUT.jsonl [PROGRAM.trl] [--window W] [--tol X]
  gpt_ref.py DIR                             make, for tools/gpu_check.py's input scripts

The model is a GPT-style decoder: token embedding plus sinusoidal positions (Vaswani et al. 2017
§3.5), L pre-LN blocks of H-head causal self-attention and a tanh-GELU MLP, a final layer norm,
logits tied to the token embedding.  Its sizes (V, D, H, L, F) are read from the program's
`const` and `dim … < NAME = n` lines, so the program is their one source; the .npz holds the 15
arrays in the order the program's `load` lists them.

"check" decodes greedily in PyTorch (float64, from the same float32 weights) by running the whole
sequence so far each step under a causal mask (and, with --window W, a band of W steps) — no KV
cache, so it checks the cache as well as the arithmetic — for as many steps as OUT.jsonl has
"token" records, and requires every token equal and every logit within --tol (default 1e-4,
absolute; float32 rounding through L layers stays near 1e-5 for the sample's sizes)."""
import argparse
import json
import math
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "samples", "transformer_decode.trl")


def sizes(program):
    """The program's integer consts and bound defaults by name, and its .npz file name."""
    text = open(program).read()
    out = {m[0]: int(m[1]) for m in re.findall(r"^const (\w+) = (\d+)\b", text, re.M)}
    out.update({m[0]: int(m[1]) for m in re.findall(r"^dim \w+ < (\w+) = (\d+)\b", text, re.M)})
    npz = re.search(r'from "([^"]+\.npz)"', text)
    missing = [n for n in ("V", "D", "H", "L", "F") if n not in out]
    if missing or not npz:
        what = ", ".join(missing) or 'load ... from "X.npz"'
        sys.exit(f"gpt_ref.py: {program}: no {what}")
    return out, npz.group(1)


def weights(s):
    """Random weights from seed 4.  The residual branches (Wq, Wk, Wo, W2) are 3x a unit-variance
    init and the embedding 0.5x: at unit scale a random model's greedy decode repeats one token
    from the first step, which would leave the cache holding copies of one embedding."""
    V, D, L, F = s["V"], s["D"], s["L"], s["F"]
    r = np.random.default_rng(4)

    def f(*shape, scale):
        return (r.standard_normal(shape) * scale).astype(np.float32)

    wte = f(V, D, scale=1.0)
    g1, b1 = 1 + f(L, D, scale=0.1), f(L, D, scale=0.1)                  # ln1 gain, bias
    wq, wk, wv, wo = [f(L, D, D, scale=D ** -0.5) for _ in range(4)]
    g2, b2 = 1 + f(L, D, scale=0.1), f(L, D, scale=0.1)                  # ln2 gain, bias
    w1, c1, w2, c2 = f(L, D, F, scale=D ** -0.5), f(L, F, scale=0.1), f(L, F, D, scale=F ** -0.5), f(L, D, scale=0.1)
    gf, bf = 1 + f(D, scale=0.1), f(D, scale=0.1)                        # final ln gain, bias
    return [wte * np.float32(0.5), g1, b1, wq * np.float32(3), wk * np.float32(3), wv, wo * np.float32(3),
            g2, b2, w1, c1, w2 * np.float32(3), c2, gf, bf]


def decode(s, w, steps, window):
    """Greedy tokens, each step's logits, and the smallest gap between a step's two largest
    logits (a gap near the tolerance would let float32 rounding pick another token)."""
    import torch
    import torch.nn.functional as Fn
    D, H, L = s["D"], s["H"], s["L"]
    Dh = D // H
    (wte, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2, gf, bf) = [torch.tensor(a, dtype=torch.float64) for a in w]
    i = torch.arange(D)
    freq = torch.exp((i - i % 2).double() * (-math.log(10000.0) / D))
    toks, out, margin = [0], [], math.inf
    for t in range(steps):
        ang = torch.arange(t + 1).double()[:, None] * freq
        x = wte[toks] + torch.where(i % 2 == 0, torch.sin(ang), torch.cos(ang))
        row, col = torch.arange(t + 1)[:, None], torch.arange(t + 1)[None, :]
        mask = (col > row) | (col <= row - window)
        for l in range(L):
            a = Fn.layer_norm(x, (D,), g1[l], b1[l], 1e-5)
            q, k, v = [(a @ m[l]).view(t + 1, H, Dh).transpose(0, 1) for m in (wq, wk, wv)]
            sc = (q @ k.transpose(1, 2)) / Dh ** 0.5
            o = torch.softmax(sc.masked_fill(mask, float("-inf")), -1) @ v
            x = x + o.transpose(0, 1).reshape(t + 1, D) @ wo[l]
            m = Fn.gelu(Fn.layer_norm(x, (D,), g2[l], b2[l], 1e-5) @ w1[l] + c1[l], approximate="tanh")
            x = x + m @ w2[l] + c2[l]
        logits = Fn.layer_norm(x[-1], (D,), gf, bf, 1e-5) @ wte.T
        toks.append(int(torch.argmax(logits)))
        out.append(logits)
        top2 = torch.topk(logits, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
    return toks[1:], out, margin


def main():
    if len(sys.argv) == 2 and sys.argv[1] not in ("-h", "--help"):
        sys.argv[1:] = ["make", sys.argv[1]]  # tools/gpu_check.py's convention: DIR
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["make", "check"])
    p.add_argument("dir")
    p.add_argument("records", nargs="?", help="check: the program's JSON Lines output")
    p.add_argument("program", nargs="?", default=SAMPLE, help="default: samples/transformer_decode.trl")
    p.add_argument("--window", type=int, default=None, help="check: attention window W (default: none)")
    p.add_argument("--tol", type=float, default=1e-4, help="check: largest absolute logit difference")
    a = p.parse_args()
    if a.mode == "make" and a.records and a.program == SAMPLE:
        a.program, a.records = a.records, None
    s, npz = sizes(a.program)
    w = weights(s)
    if a.mode == "make":
        np.savez(os.path.join(a.dir, npz), *w)
        return
    if not a.records:
        p.error("check needs OUT.jsonl")
    recs = [json.loads(line) for line in open(a.records) if '"token"' in line]
    if not recs:
        sys.exit(f"gpt_ref.py: {a.records}: no token records")
    toks, logits, margin = decode(s, w, len(recs), a.window or len(recs) + 1)
    err = 0.0
    for t, (r, ref) in enumerate(zip(recs, logits)):
        if r["token"] != toks[t]:
            sys.exit(f"gpt_ref.py: step {t}: token {r['token']}, PyTorch's {toks[t]}")
        err = max(err, float(np.max(np.abs(np.array(r["logits"], dtype=np.float64) - ref.numpy()))))
    if err > a.tol:
        sys.exit(f"gpt_ref.py: logits differ by {err:.2e} > {a.tol:g}")
    print(f"ok: {len(recs)} greedy tokens equal to PyTorch's, logits within {a.tol:g} (max {err:.1e}); "
          f"smallest top-2 gap {margin:.1e}; tokens {toks[:16]}{' ...' if len(toks) > 16 else ''}")


main()
