#!/usr/bin/env python3
"""transformer_decode_jax.py — samples/transformer_decode.trl's decoder in JAX, the way a JAX user
writes KV-cache decoding: one jax.jit over a lax.scan of the T steps, the cache a fixed
[L, H, T, Dh] array updated in place (.at[].set), attention over all T slots under a mask (XLA
needs static shapes, so step t does T slots of work where trlc does t + 1).  Same weights
(tools/gpt_ref.py's .npz), same model, float32, greedy from token 0.

    python3 transformer_decode_jax.py DIR --steps T [--window W]

Compiles ahead of time, runs once to warm up, then times one run; prints one JSON line:
{"tokens": [...], "decode_seconds", "decode_cpu_seconds", "compile_seconds"}."""
import argparse
import json
import os
import resource
import sys
import time


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="where transformer_decode.npz is (tools/gpt_ref.py make DIR)")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--window", type=int, default=0, help="attention window (0: all steps so far)")
    ap.add_argument("--heads", type=int, default=4)
    a = ap.parse_args()
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    import jax
    import jax.numpy as jnp
    import numpy as np

    z = np.load(os.path.join(a.dir, "transformer_decode.npz"))
    w = [jnp.asarray(z[f"arr_{k}"]) for k in range(15)]
    (wte, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2, gf, bf) = w
    L, D = g1.shape
    H, T = a.heads, a.steps
    Dh = D // H
    window = a.window or T + 1
    i = jnp.arange(D)
    freq = jnp.exp((i - i % 2).astype(jnp.float32) * (-9.210340371976184 / D))

    def ln(x, g, b):
        m = x.mean()
        c = x - m
        return c / jnp.sqrt((c * c).mean() + 1e-5) * g + b

    def gelu(x):
        return 0.5 * x * (1.0 + jnp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

    def decode(w):
        (wte, g1, b1, wq, wk, wv, wo, g2, b2, w1, c1, w2, c2, gf, bf) = w

        def step(carry, t):
            tok, ck, cv = carry
            ang = t.astype(jnp.float32) * freq
            x = wte[tok] + jnp.where(i % 2 == 0, jnp.sin(ang), jnp.cos(ang))
            slots = jnp.arange(T)
            keep = (slots <= t) & (slots > t - window)
            for l in range(L):
                h = ln(x, g1[l], b1[l])
                q, k, v = [(h @ m[l]).reshape(H, Dh) for m in (wq, wk, wv)]
                ck = ck.at[l, :, t].set(k)
                cv = cv.at[l, :, t].set(v)
                s = jnp.einsum("hd,htd->ht", q, ck[l]) / jnp.sqrt(jnp.float32(Dh))
                p = jax.nn.softmax(jnp.where(keep, s, -jnp.inf), axis=-1)
                o = jnp.einsum("ht,htd->hd", p, cv[l]).reshape(D)
                x = x + o @ wo[l]
                x = x + gelu(ln(x, g2[l], b2[l]) @ w1[l] + c1[l]) @ w2[l] + c2[l]
            logits = ln(x, gf, bf) @ wte.T
            nt = jnp.argmax(logits).astype(jnp.int32)
            return (nt, ck, cv), nt

        cache = jnp.zeros((L, H, T, Dh), jnp.float32)
        _, toks = jax.lax.scan(step, (jnp.int32(0), cache, cache), jnp.arange(T))
        return toks

    t0 = time.time()
    compiled = jax.jit(decode).lower(w).compile()
    compile_s = time.time() - t0
    compiled(w).block_until_ready()  # warm-up
    t0, c0 = time.time(), cpu_seconds()
    toks = compiled(w).block_until_ready()
    print(json.dumps(dict(tokens=[int(x) for x in np.asarray(toks)], decode_seconds=time.time() - t0,
                          decode_cpu_seconds=cpu_seconds() - c0, compile_seconds=compile_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
