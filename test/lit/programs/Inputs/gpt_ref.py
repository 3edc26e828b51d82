"""gpt_ref.py [make] DIR | check DIR OUT.jsonl (test/lit/programs/gpt-decode.test) — a 2-layer,
2-head GPT-style decoder (pre-LN, tanh GELU, tied embeddings) with weights from a fixed seed,
written to DIR/gpt.npz in the order gpt-decode.trl loads them; "check" decodes greedily in
PyTorch (float64) from the same weights (the whole sequence each step, causal mask, no KV cache)
and compares tokens and logits with trlc's."""
import json
import sys

import numpy as np

V, D, H, L, F, T = 16, 16, 2, 2, 32, 12
Dh = D // H


def weights():
    r = np.random.default_rng(2)
    f = lambda *s, scale=0.5: (r.standard_normal(s) * scale).astype(np.float32)
    return [f(V, D, scale=1.0), f(T + 1, D, scale=1.0),
            1 + f(L, D, scale=0.1), f(L, D, scale=0.1),        # ln1 gain, bias
            f(L, D, D, scale=D ** -0.5), f(L, D, D, scale=D ** -0.5), f(L, D, D, scale=D ** -0.5),
            f(L, D, D, scale=D ** -0.5),                        # Wq, Wk, Wv, Wo
            1 + f(L, D, scale=0.1), f(L, D, scale=0.1),         # ln2 gain, bias
            f(L, D, F, scale=D ** -0.5), f(L, F, scale=0.1), f(L, F, D, scale=F ** -0.5), f(L, D, scale=0.1),
            1 + f(D, scale=0.1), f(D, scale=0.1)]               # final ln gain, bias


def main():
    if len(sys.argv) == 2:  # tools/gpu_check.py's convention for a program's input script: DIR
        sys.argv[1:] = ["make", sys.argv[1]]
    mode, d = sys.argv[1], sys.argv[2]
    w = weights()
    if mode == "make":
        np.savez(d + "/gpt.npz", *w)
        return
    import torch
    import torch.nn.functional as Fn
    (wte, wpe, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2, gf, bf) = [torch.tensor(a, dtype=torch.float64) for a in w]
    recs = [json.loads(line) for line in open(sys.argv[3])]
    toks = [0]
    err = 0.0
    for t in range(T):
        x = wte[toks] + wpe[: t + 1]
        mask = torch.triu(torch.ones(t + 1, t + 1, dtype=torch.bool), 1)
        for l in range(L):
            a = Fn.layer_norm(x, (D,), g1[l], b1[l], 1e-5)
            q, k, v = [(a @ m[l]).view(t + 1, H, Dh).transpose(0, 1) for m in (wq, wk, wv)]
            s = (q @ k.transpose(1, 2)) / Dh ** 0.5
            o = torch.softmax(s.masked_fill(mask, float("-inf")), -1) @ v
            x = x + o.transpose(0, 1).reshape(t + 1, D) @ wo[l]
            m = Fn.gelu(Fn.layer_norm(x, (D,), g2[l], b2[l], 1e-5) @ w1[l] + c1[l], approximate="tanh")
            x = x + m @ w2[l] + c2[l]
        logits = Fn.layer_norm(x[-1], (D,), gf, bf, 1e-5) @ wte.T
        toks.append(int(torch.argmax(logits)))
        r = recs[t]
        assert r["token"] == toks[-1], (t, r["token"], toks[-1])
        err = max(err, float((torch.tensor(r["logits"], dtype=torch.float64) - logits).abs().max()))
    assert err < 1e-4, err
    print(f"ok: {T} greedy tokens equal to PyTorch's, logits within 1e-4 (max {err:.1e}); tokens {toks[1:]}")


main()
