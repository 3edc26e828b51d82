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

# ---- Off-policy (CleanRL dqn.py), f64 unless noted
ts = np.array([0, 1, 7, 1000, 124999, 125000, 250000, 400000], dtype=np.int32)
q = rng.normal(size=(6, 3))
qn = rng.normal(size=(6, 3))
acts = np.array([0, 2, 1, 1, 0, 2], dtype=np.int32)
r6 = rng.normal(size=6)
term = np.array([0, 1, 0, 0, 1, 0], dtype=bool)
x = np.array([-3.0, -1.0, -0.999, -0.2, 0.0, 0.5, 0.999, 1.0, 2.5])
pa = (rng.normal(size=(3, 2)), (rng.normal(size=4), rng.normal(size=2)))
pb = (rng.normal(size=(3, 2)), (rng.normal(size=4), rng.normal(size=2)))
body = """
import std.rl
import std.nn
ls = rl.linear_schedule(f64(1.0), f64(0.05), f64(250000.0), ts)
ri = rl.randint(rng(5), [4000], 7)
ri1 = rl.randint(rng(6), [], 1)
rp = rl.replay_indices(rng(7), 4000, 10000)
dim k < K = 2000
g0[k] = rl.epsilon_greedy(rng(8, k), 0.0, q[k % 6])
g1[k] = rl.epsilon_greedy(rng(9, k), 1.0, q[k % 6])
g5[k] = rl.epsilon_greedy(rng(10, k), 0.5, q[k % 6])
qt = rl.q_taken(q, acts)
dt = rl.dqn_target(qn, r6, term, 0.99)
ms = rl.mse(r6, qt)
hu = rl.huber(x, 1.0)
hu2 = rl.huber(x, 0.5)
pk = rl.polyak((pa0, (pa1, pa2)), (pb0, (pb1, pb2)), 0.005)
hard = rl.polyak((pa0, (pa1, pa2)), (pb0, (pb1, pb2)), 1.0)
tl = nn.torch_layer(rng(11), 120, 84)
"""
outs = ["ls", "ri", "ri1", "rp", "g0[0:K]", "g1[0:K]", "g5[0:K]", "qt", "dt", "ms", "hu", "hu2",
        "pk[0]", "pk[1][0]", "pk[1][1]", "hard[0]", "hard[1][0]", "hard[1][1]", "tl[0]", "tl[1]"]
r = run(trlc, body, dict(ts=ts, q=q, qn=qn, acts=acts, r6=r6, term=term, x=x, pa0=pa[0],
                         pa1=pa[1][0], pa2=pa[1][1], pb0=pb[0], pb1=pb[1][0], pb2=pb[1][1]), outs)
slope = (0.05 - 1.0) / 250000.0                       # CleanRL linear_schedule, same operations
ck.close("linear_schedule", r[0], np.maximum(slope * ts.astype(np.float64) + 1.0, 0.05))
ri = r[1]
ck.true("randint: i32 in [0, 7)", ri.dtype == np.int32 and ri.min() >= 0 and ri.max() < 7, ri[:10])
counts = np.bincount(ri, minlength=7)                 # 4000/7 = 571.4 each, sd 22.1
ck.true("randint: every value, counts within 5 sd of uniform", (abs(counts - 4000 / 7) < 111).all(),
        counts)
ck.true("randint: scalar of n = 1 is 0", r[2].shape == () and int(r[2]) == 0, r[2])
ck.true("replay_indices: 4000 in [0, 10000), both halves drawn",
        r[3].shape == (4000,) and r[3].min() >= 0 and r[3].max() < 10000 and
        abs((r[3] < 5000).mean() - 0.5) < 0.04, r[3][:10])
greedy = np.argmax(q, axis=1)[np.arange(2000) % 6]
ck.true("epsilon_greedy eps = 0: argmax", (r[4] == greedy).all(), r[4][:12])
cg = np.bincount(r[5], minlength=3)                   # 2000/3 = 666.7 each, sd 21.1
ck.true("epsilon_greedy eps = 1: uniform actions", r[5].max() < 3 and (abs(cg - 2000 / 3) < 106).all(), cg)
# eps = 0.5: greedy with probability 0.5 + 0.5/3 = 2/3 (the random action may be the greedy one)
agree = (r[6] == greedy).mean()
ck.true("epsilon_greedy eps = 0.5: 2/3 greedy", abs(agree - 2 / 3) < 0.055, agree)
qt = np.take_along_axis(q, acts[:, None], axis=1)[:, 0]
ck.close("q_taken", r[7], qt)
ck.close("dqn_target", r[8], r6 + 0.99 * qn.max(axis=1) * (1 - term), rtol=1e-15)
ck.close("mse", r[9], ((r6 - qt) ** 2).mean(), rtol=1e-15)
for k, d in ((10, 1.0), (11, 0.5)):                   # torch.nn.HuberLoss(reduction='none')
    ax = np.abs(x)
    ck.close(f"huber delta={d}", r[k], np.where(ax < d, 0.5 * x * x, d * (ax - 0.5 * d)))
for k, (a, b) in enumerate(((pa[0], pb[0]), (pa[1][0], pb[1][0]), (pa[1][1], pb[1][1]))):
    ck.close(f"polyak leaf {k}", r[12 + k], 0.005 * b + (1.0 - 0.005) * a)
    ck.close(f"polyak tau = 1 copies leaf {k}", r[15 + k], b)
W, bb = r[18], r[19]
a = 1 / np.sqrt(120)                                  # torch nn.Linear: U(-1/sqrt(in), 1/sqrt(in))
ck.true("torch_layer shapes, f32", W.shape == (120, 84) and bb.shape == (84,) and W.dtype == np.float32,
        (W.shape, bb.shape, W.dtype))
ck.true("torch_layer W, b in (-a, a)", np.abs(W).max() < a and np.abs(bb).max() < a, np.abs(W).max())
ck.true("torch_layer W: sd a/sqrt(3), mean 0", abs(W.std() / (a / np.sqrt(3)) - 1) < 0.03 and
        abs(W.mean()) < 0.01 * a, (W.std(), W.mean()))
ck.finish("std.rl")
