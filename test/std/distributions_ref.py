"""std.distributions through `trlc --interpret` against torch.distributions' formulas written in
numpy (Categorical: log_softmax, entropy with p·log p = 0 at p = 0; Normal: log_prob, entropy),
in f64; normal_sample checked as mu + sigma·normal_like draws and by its moments.
Usage: distributions_ref.py TRLC"""
import math
import sys

import numpy as np

from trl_harness import Checker, run

trlc = sys.argv[1]
rng = np.random.default_rng(4)
logits = rng.normal(size=(5, 3)) * 2
masked = np.array([0.5, -np.inf, 1.5, -np.inf])
acts = np.array([0, 2, 1, 1, 2], dtype=np.int32)
mu = rng.normal(size=4)
sigma = rng.uniform(0.2, 2.0, size=4)
x = rng.normal(size=4)
ck = Checker()


def log_softmax(l):
    m = l.max(axis=-1, keepdims=True)
    return (l - m) - np.log(np.exp(l - m).sum(axis=-1, keepdims=True))


body = """
import std.distributions as D
lp = D.categorical_log_prob(logits, acts)
lp1 = D.categorical_log_prob(logits[1], 2)
ent = D.categorical_entropy(logits)
entm = D.categorical_entropy(masked)
lpm = D.categorical_log_prob(masked, 2)
a = D.categorical_sample(rng(1), logits)
nlp = D.normal_log_prob(mu, sigma, x)
nent = D.normal_entropy(mu, sigma)
nz = (D.normal_sample(rng(2), mu, sigma), normal_like(rng(2), mu))  // one tensor: one stream
dim j < J = 4000
big[j] = D.normal_sample(rng(j), f64(1.5), f64(0.5))
"""
outs = ["lp", "lp1", "ent", "entm", "lpm", "a", "nlp", "nent", "nz[0]", "nz[1]", "big[0:J]"]
r = run(trlc, body, dict(logits=logits, acts=acts, masked=masked, mu=mu, sigma=sigma, x=x), outs)
lsm = log_softmax(logits)
ck.close("categorical log_prob (batched)", r[0], lsm[np.arange(5), acts], rtol=1e-15)
ck.close("categorical log_prob (one row)", r[1], lsm[1, 2], rtol=1e-15)
p = np.exp(lsm)
ck.close("categorical entropy", r[2], -(p * lsm).sum(-1), rtol=1e-14)
lm = log_softmax(masked)
pm = np.exp(lm)
with np.errstate(invalid="ignore"):
    pm_lm = np.where(pm > 0, pm * lm, 0.0)
ck.close("entropy with -inf logits (torch clamps: 0·log 0 = 0)", r[3],
         -pm_lm.sum(), rtol=1e-14)
ck.close("log_prob with -inf logits", r[4], lm[2], rtol=1e-15)
ck.true("categorical sample shape and range", r[5].shape == (5,) and r[5].dtype == np.int32 and
        ((r[5] >= 0) & (r[5] < 3)).all(), repr(r[5]))
var = sigma * sigma
want = -((x - mu) ** 2) / (2 * var) - np.log(sigma) - math.log(math.sqrt(2 * math.pi))
ck.close("normal log_prob", r[6], want, rtol=1e-14)
ck.close("normal entropy", r[7], 0.5 + 0.5 * math.log(2 * math.pi) + np.log(sigma), rtol=1e-15)
ck.close("normal sample = mu + sigma·normal_like(key, mu)", r[8], mu + sigma * r[9])
big = r[10]
ck.true("normal sample dtype f64", big.dtype == np.float64, str(big.dtype))
ck.true("normal sample moments", abs(big.mean() - 1.5) < 0.05 and abs(big.std() - 0.5) < 0.03,
        f"mean {big.mean()} std {big.std()}")
ck.finish("std.distributions")
