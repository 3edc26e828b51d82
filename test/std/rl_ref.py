"""std.rl through `trlc --interpret` against numpy references (CleanRL ppo.py's GAE loop and
losses, hand-written return recursions), in f64 unless noted.  Usage: rl_ref.py TRLC"""
import sys

import numpy as np

from trl_harness import Checker, run

trlc = sys.argv[1]
rng = np.random.default_rng(2)
T = 9
rew = rng.normal(size=T)
val = rng.normal(size=T)
done = np.array([0, 0, 1, 0, 0, 0, 1, 1, 0], dtype=bool)
nv = np.float64(0.7)
gamma, lam = 0.99, 0.95
ck = Checker()


def returns_ref(r, d, gamma, boot=None):
    g = np.zeros_like(r)
    nxt = boot if boot is not None else 0.0
    for t in reversed(range(len(r))):
        last = t == len(r) - 1
        if last and boot is None:
            g[t] = r[t]
        else:
            g[t] = r[t] + gamma * (1.0 - d[t]) * (nxt if last else g[t + 1])
    return g


def gae_step_ref(r, v, d, nv, gamma, lam):  # step convention: d[t] ends the episode at t
    adv = np.zeros_like(r)
    last = 0.0
    for t in reversed(range(len(r))):
        nextvalues = nv if t == len(r) - 1 else v[t + 1]
        nonterm = 1.0 - d[t]
        delta = r[t] + gamma * nextvalues * nonterm - v[t]
        adv[t] = last = delta + gamma * lam * nonterm * last
    return adv, adv + v


def gae_cleanrl_ref(rewards, values, dones, next_value, next_done, gamma, lam):  # ppo.py
    advantages = np.zeros_like(rewards)
    lastgaelam = 0
    num_steps = len(rewards)
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
    return advantages, advantages + values


def nstep_ref(r, d, v, nv, gamma, n):
    T = len(r)
    ext = np.append(v, nv)
    out = np.zeros_like(r)
    for t in range(T):
        g, disc, alive = 0.0, 1.0, True
        for k in range(n):
            if t + k >= T:
                break
            g += disc * r[t + k]
            disc *= gamma
            if d[t + k]:
                alive = False
                break
        if alive:
            u = min(t + n, T)
            g += gamma ** (u - t) * ext[u]
        out[t] = g
    return out


body = """
import std.rl
dr = rl.discounted_returns(rew, done, 0.99)
br = rl.bootstrapped_returns(rew, done, nv, 0.99)
ga = rl.gae(rew, val, done, nv, 0.99, 0.95)
gc = rl.gae_cleanrl(rew, val, done, nv, true, 0.99, 0.95)
ns3 = rl.nstep_returns(rew, done, val, nv, f64(0.99), 3)
ns1 = rl.nstep_returns(rew, done, val, nv, f64(0.99), 1)
nsT = rl.nstep_returns(rew, done, val, nv, f64(0.99), 20)
dc = discounted_cumsum(rew, val)
dc2 = discounted_cumsum(m2, g2, axis=1)
"""
m2 = rng.normal(size=(2, 4))
g2 = rng.uniform(size=4)
outs = ["dr", "br", "ga[0]", "ga[1]", "gc[0]", "gc[1]", "ns3", "ns1", "nsT", "dc", "dc2"]
r = run(trlc, body, dict(rew=rew, val=val, done=done, nv=nv, m2=m2, g2=g2), outs)
ck.close("discounted_returns", r[0], returns_ref(rew, done, gamma), rtol=1e-15)
ck.close("bootstrapped_returns", r[1], returns_ref(rew, done, gamma, boot=nv), rtol=1e-15)
a, R = gae_step_ref(rew, val, done, nv, gamma, lam)
ck.close("gae advantages", r[2], a, rtol=1e-14, atol=1e-15)
ck.close("gae returns", r[3], R, rtol=1e-14, atol=1e-15)
a, R = gae_cleanrl_ref(rew, val, done.astype(np.float64), nv, 1.0, gamma, lam)
ck.close("gae_cleanrl advantages", r[4], a, rtol=1e-14, atol=1e-15)
ck.close("gae_cleanrl returns", r[5], R, rtol=1e-14, atol=1e-15)
ck.close("nstep n=3", r[6], nstep_ref(rew, done, val, nv, gamma, 3), rtol=1e-14, atol=1e-15)
ck.close("nstep n=1", r[7], nstep_ref(rew, done, val, nv, gamma, 1), rtol=1e-14, atol=1e-15)
ck.close("nstep n>T", r[8], nstep_ref(rew, done, val, nv, gamma, 20), rtol=1e-14, atol=1e-15)
want = np.zeros(T)
for t in reversed(range(T)):
    want[t] = rew[t] + (val[t] * want[t + 1] if t < T - 1 else 0.0)
ck.close("discounted_cumsum array gamma", r[9], want)
want = np.zeros_like(m2)
for t in reversed(range(4)):
    want[:, t] = m2[:, t] + (g2[t] * want[:, t + 1] if t < 3 else 0.0)
ck.close("discounted_cumsum broadcast gamma, axis=1", r[10], want)

# ---- PPO losses (CleanRL ppo.py), f64
N = 16
logp = rng.normal(size=N) * 0.3 - 1.0
old = logp + rng.normal(size=N) * 0.3
adv = rng.normal(size=N)
v = rng.normal(size=N)
oldv = v + rng.normal(size=N) * 0.5
ret = rng.normal(size=N)
ent = rng.uniform(size=N)
body = """
import std.rl
na = rl.normalize(adv)
pg = rl.ppo_policy_loss(logp, old, rl.normalize(adv), 0.2)
vl = rl.ppo_value_loss(v, oldv, ret, 0.2)
vu = rl.value_loss(v, ret)
tot = rl.ppo_loss(pg, vl, ent, 0.01, 0.5)
kl = rl.approx_kl(logp, old)
cf = rl.clip_fraction(logp, old, 0.2)
perm = rl.minibatch_perm(rng(3), 16)
dim k < K = 4
mb[k] = rl.minibatch(perm, k, 4)
"""
outs = ["na", "pg", "vl", "vu", "tot", "kl", "cf", "perm", "mb[0]", "mb[3]"]
r = run(trlc, body, dict(logp=logp, old=old, adv=adv, v=v, oldv=oldv, ret=ret, ent=ent), outs)
na = (adv - adv.mean()) / (adv.std(ddof=1) + 1e-8)
ck.close("normalize (ddof=1)", r[0], na, rtol=1e-13, atol=1e-15)
ratio = np.exp(logp - old)
pg = np.maximum(-na * ratio, -na * np.clip(ratio, 0.8, 1.2)).mean()
ck.close("ppo_policy_loss", r[1], pg, rtol=1e-13)
vc = oldv + np.clip(v - oldv, -0.2, 0.2)
vl = 0.5 * np.maximum((v - ret) ** 2, (vc - ret) ** 2).mean()
ck.close("ppo_value_loss", r[2], vl, rtol=1e-13)
ck.close("value_loss", r[3], 0.5 * ((v - ret) ** 2).mean(), rtol=1e-13)
ck.close("ppo_loss", r[4], pg - 0.01 * ent.mean() + vl * 0.5, rtol=1e-13)
ck.close("approx_kl", r[5], ((ratio - 1) - (logp - old)).mean(), rtol=1e-12)
ck.close("clip_fraction", r[6], np.float32((np.abs(ratio - 1.0) > 0.2).mean()))
ck.true("minibatch_perm is a permutation", sorted(r[7].tolist()) == list(range(16)), r[7])
ck.close("minibatch 0", r[8], r[7][0:4])
ck.close("minibatch 3", r[9], r[7][12:16])
ck.finish("std.rl")
