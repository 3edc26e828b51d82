"""End to end: std.nn + std.optim (+ std.rl, std.distributions) with grad under `trlc
--interpret`: an MLP regression with Adam and global-norm clipping, and a PPO-style
actor-critic loss (clipped surrogate, clipped value loss, entropy bonus) trained on fixed data.
Usage: train_smoke.py TRLC"""
import json
import sys

import numpy as np

from trl_harness import Checker, run

trlc = sys.argv[1]
ck = Checker()
r = np.random.default_rng(0)
xs = r.normal(size=(32, 3)).astype(np.float32)
ys = (np.sin(xs[:, :1]) + xs[:, 1:2] * xs[:, 2:3]).astype(np.float32)
body = """
import std.nn
import std.optim
dim i < I = 200
net[0] = nn.mlp_init(rng(0), [3, 16, 16, 1], [nn.sqrt2, nn.sqrt2, 1.0])
opt[0] = optim.adam_init(net[0])
loss[i] = mean((nn.mlp(net[i], xs) - ys) ** 2)
g[i] = optim.clip_by_global_norm(grad(loss[i], net[i]), 1.0)
(net, opt)[i+1] = optim.adam(net[i], g[i], opt[i], 0.01)
emit "train"[i] { loss: loss[i], gnorm: optim.global_norm(g[i]) }
"""
p = run(trlc, body, dict(xs=xs, ys=ys))
rows = [json.loads(l) for l in p.stdout.splitlines()]
loss = [row["loss"] for row in rows]
ck.true("regression: 200 iterations", len(loss) == 200, str(len(loss)))
ck.true("regression: loss falls below 2% of its start", loss[-1] < 0.02 * loss[0],
        f"{loss[0]} -> {loss[-1]}")
ck.true("regression: clipped norms <= 1", all(row["gnorm"] <= 1.0 + 1e-5 for row in rows))

obs = r.normal(size=(16, 4)).astype(np.float32)
adv = r.normal(size=16).astype(np.float32)
act = r.integers(0, 2, size=16).astype(np.int32)
body = """
import std.nn
import std.optim
import std.rl
import std.distributions as D
dim i < I = 50
ac[0] = (nn.mlp_init(rng(0), [4, 8, 8, 2], [nn.sqrt2, nn.sqrt2, 0.01]),
         nn.mlp_init(rng(1), [4, 8, 8, 1], [nn.sqrt2, nn.sqrt2, 1.0]))
opt[0] = optim.adam_init(ac[0])
old = stop_grad(D.categorical_log_prob(nn.mlp(ac[0][0], obs), act))
old_v = stop_grad(reshape(nn.mlp(ac[0][1], obs), [16]))
logits[i] = nn.mlp(ac[i][0], obs)
lp[i] = D.categorical_log_prob(logits[i], act)
v[i] = reshape(nn.mlp(ac[i][1], obs), [16])
pg[i] = rl.ppo_policy_loss(lp[i], old, rl.normalize(adv), 0.2)
loss[i] = rl.ppo_loss(pg[i], rl.ppo_value_loss(v[i], old_v, adv, 0.2),
                      D.categorical_entropy(logits[i]), 0.01, 0.5)
(ac, opt)[i+1] = optim.adam(ac[i], grad(loss[i], ac[i]), opt[i], 0.01)
emit "train"[i] { loss: loss[i], pg: pg[i], kl: rl.approx_kl(lp[i], old),
                  cf: rl.clip_fraction(lp[i], old, 0.2) }
"""
p = run(trlc, body, dict(obs=obs, adv=adv, act=act))
rows = [json.loads(l) for l in p.stdout.splitlines()]
ck.true("ppo: ratio is 1 at the start (kl 0, pg = -mean(normalized adv) = 0)",
        rows[0]["kl"] == 0.0 and abs(rows[0]["pg"]) < 1e-6, str(rows[0]))
ck.true("ppo: loss decreases", rows[-1]["loss"] < rows[0]["loss"] - 0.05,
        f'{rows[0]["loss"]} -> {rows[-1]["loss"]}')
ck.true("ppo: the policy moves (kl > 0, some ratios clipped)", rows[-1]["kl"] > 0 and
        rows[-1]["cf"] > 0, str(rows[-1]))
ck.finish("std training smoke")
