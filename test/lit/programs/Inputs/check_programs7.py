"""check_programs7.py WHAT OUT.jsonl — independent re-computations (numpy, or PyTorch for the
gradients) of the session-7 probe programs in this directory, from what `trlc --interpret`
printed.  Prints "ok: ..." or raises (AssertionError) / prints FAIL and exits 1."""
import json
import sys

import numpy as np

what, path = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0], path]

def check_tdlam():
    L = [json.loads(l) for l in open(sys.argv[1])]
    w = np.array(L[-1]["w"], np.float32); S = L[:-1]
    B, T = 3, 40; g, lam = 0.99, 0.9
    ok = True
    for b in range(B):
        rows = S[b*T:(b+1)*T]
        r = np.array([x["r"] for x in rows]); d = np.array([x["d"] for x in rows], float)
        v = np.array([np.array(x["obs"]) @ w for x in rows]); vn = np.array([np.array(x["nobs"]) @ w for x in rows])
        assert np.allclose(v, [x["v"] for x in rows], atol=1e-5)
        assert np.allclose(vn, [x["vn"] for x in rows], atol=1e-5)
        # consecutive obs: after a non-done step, obs[t+1] == nobs[t]
        for t in range(T-1):
            if not d[t]: assert rows[t+1]["obs"] == rows[t]["nobs"], (b, t)
            else: assert rows[t+1]["obs"] != rows[t]["nobs"]
        G = np.zeros(T); nxt = vn[T-1]
        G[T-1] = r[T-1] + g*(1-d[T-1])*vn[T-1]
        for t in range(T-2, -1, -1):
            G[t] = r[t] + g*(1-d[t])*((1-lam)*vn[t] + lam*G[t+1])
        err = np.abs(G - [x["G"] for x in rows]).max()
        print("b", b, "dones", int(d.sum()), "max err", err)
        ok &= err < 1e-4
    print("ok: tdlam" if ok else "FAIL"); ok or sys.exit(1)

def check_vtrace():
    import torch
    torch.set_default_dtype(torch.float64)
    L = [json.loads(l) for l in open(sys.argv[1])]
    B, T, I = 2, 12, 4; g, lr = 0.9, 0.1
    data = L[:B*T]; last = L[B*T:B*T+B]; init = L[B*T+B]; train = L[B*T+B+1:]
    f = lambda k: torch.tensor(np.array([x[k] for x in data]).reshape(B, T, *np.shape(data[0][k])), dtype=torch.float64)
    obs, mu, r = f("obs"), f("mu"), f("r"); a = torch.tensor([x["a"] for x in data]).reshape(B, T)
    d = f("d"); obsT = torch.tensor([x["obs"] for x in last], dtype=torch.float64)
    W = torch.tensor(init["W"], dtype=torch.float64, requires_grad=True)
    wv = torch.tensor(init["wv"], dtype=torch.float64, requires_grad=True)
    for it in range(I):
        logpi = torch.log_softmax(obs @ W, -1).gather(-1, a[..., None])[..., 0]
        logmu = torch.log_softmax(mu, -1).gather(-1, a[..., None])[..., 0]
        ratio = torch.exp(logpi - logmu); rho = ratio.clamp(max=1.0); c = ratio.clamp(max=1.0)
        V = obs @ wv; Vb = obsT @ wv; disc = g * (1 - d)
        Vn = torch.cat([V[:, 1:], Vb[:, None]], 1)
        delta = rho * (r + disc * Vn - V)
        dv = [None] * T; dv[T-1] = delta[:, T-1]
        for t in range(T-2, -1, -1): dv[t] = delta[:, t] + disc[:, t] * c[:, t] * dv[t+1]
        vs = V + torch.stack(dv, 1)
        vsn = torch.cat([vs[:, 1:], Vb[:, None]], 1)
        adv = rho * (r + disc * vsn - V)
        pg = -(logpi * adv.detach()).mean(); vl = 0.5 * ((vs.detach() - V) ** 2).mean()
        loss = pg + 0.5 * vl
        gW, gv = torch.autograd.grad(loss, (W, wv))
        e = train[it]
        errs = [abs(loss.item() - e["loss"]), np.abs(vs.detach().numpy() - np.array(e["vs"])).max(),
                np.abs(gv.numpy() - np.array(e["gv"])).max()]
        print(it, loss.item(), e["loss"], errs)
        assert max(errs) < 1e-5
        with torch.no_grad(): W -= lr * gW; wv -= lr * gv
    print("ok: vtrace")

def check_ddqn():
    import torch
    torch.set_default_dtype(torch.float64)
    L = [json.loads(l) for l in open(sys.argv[1])]
    I, B, T, C, g = 7, 4, 8, 3, 0.99
    tr = [x for x in L if "i" in x]; data = [x for x in L if "o" in x]
    def P(n): return [(torch.tensor(W, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)) for W, b in n]
    def mlp1(p, x): (W1, b1), (W2, b2) = p; return torch.tanh(x @ W1 + b1) @ W2 + b2
    for i in range(I):
        net = P(tr[i]["net"]); tgt = P(tr[C * (i // C)]["net"])
        rows = data[i*B*T:(i+1)*B*T]
        o = torch.tensor([x["o"] for x in rows], dtype=torch.float64); o2 = torch.tensor([x["o2"] for x in rows], dtype=torch.float64)
        a = torch.tensor([x["a"] for x in rows]); r = torch.tensor([x["r"] for x in rows], dtype=torch.float64)
        d = torch.tensor([x["d"] for x in rows], dtype=torch.float64)
        y = r + g * (1 - d) * mlp1(tgt, o2).gather(1, mlp1(net, o2).argmax(1)[:, None])[:, 0]
        e = mlp1(net, o).gather(1, a[:, None])[:, 0] - y
        loss = torch.where(e.abs() < 1, 0.5 * e * e, e.abs() - 0.5).mean().item()
        dist = sum((n[k] - t_[k]).abs().sum().item() for n, t_ in zip(net, tgt) for k in range(2))
        print(i, loss, tr[i]["loss"], dist, tr[i]["dist"])
        assert abs(loss - tr[i]["loss"]) < 1e-5 and abs(dist - tr[i]["dist"]) < 1e-4
        assert (dist == 0) == (i % C == 0)
    print("ok: ddqn")

def check_sac():
    import torch
    torch.set_default_dtype(torch.float64)
    L = [json.loads(l) for l in open(sys.argv[1])]
    I, B, T = 4, 2, 5; g, tau, lr, tent = 0.99, 0.005, 3e-4, -1.0
    tr = L[:I]; init = L[I]; data = L[I+1:]
    def P(n, grad=False): return [tuple(torch.tensor(x, requires_grad=grad) for x in layer) for layer in n]
    def mlp1(p, x): (W1, b1), (W2, b2) = p; return torch.tanh(x @ W1 + b1) @ W2 + b2
    def policy(p, o, noise):
        h = mlp1(p, o); mu = h[:, 0:1]; std = torch.exp(h[:, 1:2].clamp(-5, 2)); u = mu + std * noise
        a = torch.tanh(u)
        lp = (-(u - mu) ** 2 / (2 * std ** 2) - torch.log(std) - 0.5 * np.log(2 * np.pi) - torch.log(1 - a * a + 1e-6)).sum(1)
        return 2 * a, lp
    def qval(q, o, a): return mlp1(q, torch.cat([o, a / 2], 1))[:, 0]
    f = lambda k: torch.tensor([x[k] for x in data], dtype=torch.float64)
    ob, act, rew, ob2, n2, nn_, term = map(f, ["ob", "act", "rew", "ob2", "n2", "nn", "term"])
    pi = P(init["pi"], True); q1 = P(init["q1"], True); q2 = P(init["q2"], True); q1t, q2t = P(init["q1"]), P(init["q2"])
    la = torch.tensor(0.0, requires_grad=True)
    a2, lp2 = policy(pi, ob2, n2)
    y = rew + g * (1 - term) * (torch.min(qval(q1t, ob2, a2), qval(q2t, ob2, a2)) - torch.exp(la) * lp2)
    y = y.detach()
    qloss = ((qval(q1, ob, act) - y) ** 2 + (qval(q2, ob, act) - y) ** 2).mean()
    an, lpn = policy(pi, ob, nn_)
    aloss = (torch.exp(la).detach() * lpn - torch.min(qval(q1, ob, an), qval(q2, ob, an))).mean()
    alloss = -(la * (lpn + tent).detach()).mean()
    print("losses", qloss.item(), aloss.item(), alloss.item(), "trlc", tr[0]["qloss"], tr[0]["aloss"], tr[0]["alloss"])
    assert abs(qloss.item() - tr[0]["qloss"]) < 1e-4 * abs(qloss.item()) and abs(aloss.item() - tr[0]["aloss"]) < 1e-5
    def adam1(params, grads):  # first Adam step from zero state
        out = []
        for p, gr in zip(params, grads):
            m = 0.1 * gr; v = 0.001 * gr * gr
            out.append(p - (lr / 0.1) * m / (torch.sqrt(v) / np.sqrt(0.001) + 1e-8))
        return out
    flat = lambda n: [x for layer in n for x in layer]
    gp = torch.autograd.grad(aloss, flat(pi)); gq = torch.autograd.grad(qloss, flat(q1) + flat(q2)); ga = torch.autograd.grad(alloss, la)
    pi1 = adam1(flat(pi), gp); q11 = adam1(flat(q1), gq[:4]); q21 = adam1(flat(q2), gq[4:]); la1 = adam1([la], ga)[0]
    errs = []
    for mine, ref in [(pi1, init["pi1"]), (q11, init["q11"]), (q21, init["q21"])]:
        errs.append(max(np.abs(m.detach().numpy() - np.array(r)).max() for m, r in zip(mine, flat(ref))))
    q1t1 = [tau * a.detach() + (1 - tau) * b for a, b in zip(q11, flat(q1t))]
    errs.append(max(np.abs(m.numpy() - np.array(r)).max() for m, r in zip(q1t1, flat(init["q1t1"]))))
    errs.append(abs(la1.item() - tr[1]["la"]))
    print("param errs after one step", errs)
    assert max(errs) < 2e-6
    print("ok: sac")

def check_gru():
    import torch
    torch.set_default_dtype(torch.float64)
    L = [json.loads(l) for l in open(sys.argv[1])]
    I, B, T, H, g = 3, 3, 30, 6, 0.95
    tr = L[:I]; roll = L[I:]
    worst = 0
    for i in range(I):
        cell = [torch.tensor(x, requires_grad=True) for x in tr[i]["cell"]]
        head = torch.tensor(tr[i]["head"], requires_grad=True)
        Wz, Uz, bz, Wr, Ur, br, Wh, Uh, bh = cell
        rows = roll[i*B*T:(i+1)*B*T]
        ob = torch.tensor([x["ob"] for x in rows]).reshape(B, T, 4); a = torch.tensor([x["a"] for x in rows]).reshape(B, T)
        r = torch.tensor([x["r"] for x in rows]).reshape(B, T); d = torch.tensor([x["d"] for x in rows], dtype=torch.float64).reshape(B, T)
        h = torch.zeros(B, H); lps = []
        for t in range(T):
            x = ob[:, t]
            z = torch.sigmoid(x @ Wz + h @ Uz + bz); rr = torch.sigmoid(x @ Wr + h @ Ur + br)
            hh = torch.tanh(x @ Wh + (rr * h) @ Uh + bh); hn = (1 - z) * h + z * hh
            lps.append(torch.log_softmax(hn @ head, -1).gather(1, a[:, t:t+1])[:, 0])
            h = hn * (1 - d[:, t:t+1])
        ret = torch.zeros(B, T); ret[:, T-1] = r[:, T-1]
        for t in range(T-2, -1, -1): ret[:, t] = r[:, t] + g * (1 - d[:, t]) * ret[:, t+1]
        loss = -(torch.stack(lps, 1) * ret).mean()
        grads = torch.autograd.grad(loss, cell + [head])
        e = [abs(loss.item() - tr[i]["loss"]) / abs(loss.item())]
        for gr, mine in zip(grads, tr[i]["gc"] + [tr[i]["gh"]]):
            e.append(np.abs(gr.numpy() - np.array(mine)).max() / (np.abs(gr.numpy()).max() + 1e-12))
        print(i, "loss", loss.item(), tr[i]["loss"], "max rel err", max(e), "dones", int(d.sum()))
        worst = max(worst, max(e))
    print("ok: gru" if worst < 1e-4 else "FAIL"); worst < 1e-4 or sys.exit(1)

def check_rw64():
    L = [json.loads(l) for l in open(sys.argv[1])]
    E, T, alpha, gamma, lam = 6, 24, 0.1, 1.0, 0.8
    w = np.full(5, 0.5); ok = True
    def feat(s): x = np.zeros(7); x[s] = 1.0; return x[1:6]
    for e in range(E):
        s = L[e]["s"]; z = feat(s[0])
        for t in range(T):
            x, xn = feat(s[t]), feat(s[t+1])
            live = s[t] not in (0, 6)
            r = 1.0 if live and s[t+1] == 6 else 0.0
            v = sum(x[k] * w[k] for k in range(5)); vn = sum(xn[k] * w[k] for k in range(5))  # sequential
            delta = r + gamma * vn - v if live else 0.0
            w = w + alpha * delta * z
            z = gamma * lam * z + xn
            if live: assert abs(s[t+1] - s[t]) == 1
            else: assert s[t+1] == s[t]
        same = list(w) == L[e]["w"]
        print(e, "equal bits" if same else ("DIFF", list(w), L[e]["w"]))
        ok &= same
    print("ok: rw64: weights equal bits" if ok else "FAIL"); ok or sys.exit(1)

def check_chain():
    L = [json.loads(l) for l in open(sys.argv[1])]
    T, alpha, g = 60, np.float32(0.5), np.float32(0.9)
    f = np.float32
    Q = np.zeros((6, 2), np.float32); steps = L[:T]
    for t in range(T):
        s, a = steps[t]["s"], steps[t]["a"]
        n = s + 1 if a == 1 else max(s - 1, 0); d = n == 5; r = f(1.0) if d else f(-0.01)
        assert (f(steps[t]["r"]), steps[t]["d"]) == (r, d), t
        if t + 1 < T: assert steps[t+1]["s"] == (0 if d else n)
        q = Q[s]
        tgt = r + g * (f(1) - f(d)) * Q[n].max()
        Q = Q.copy(); Q[s, a] = Q[s, a] + alpha * (tgt - q[a])
    ok = np.array_equal(Q, np.array(L[T]["Q"], np.float32))
    assert ok, ("DIFF", Q, L[T]["Q"])
    print("ok: chain: Q equal bits,", sum(x["d"] for x in steps), "episodes")

def check_c51():
    import torch
    torch.set_default_dtype(torch.float64)
    L = [json.loads(l) for l in open(sys.argv[1])]
    N, A, vmin, vmax, g = 6, 11, -2.0, 2.0, 0.9
    tr, train = L[:N], L[N:]
    dz = (vmax - vmin) / (A - 1); z = vmin + dz * np.arange(A)
    o = torch.tensor([x["o"] for x in tr]); o2 = torch.tensor([x["o2"] for x in tr])
    a = torch.tensor([x["a"] for x in tr]); r = np.array([x["r"] for x in tr]); d = np.array([x["d"] for x in tr], float)
    W = torch.tensor(train[0]["W"], requires_grad=True)
    for it in range(2):
        assert np.abs(W.detach().numpy() - np.array(train[it]["W"])).max() < 1e-6
        with torch.no_grad():
            p2 = torch.softmax((o2 @ W.reshape(3, 2 * A)).reshape(N, 2, A), -1).numpy()
        m = np.zeros((N, A))
        for n in range(N):   # the textbook loop (Dopamine / CleanRL C51)
            best = np.argmax((p2[n] * z).sum(-1)); pn = p2[n, best]
            tz = np.clip(r[n] + g * (1 - d[n]) * z, vmin, vmax); b = (tz - vmin) / dz
            l, u = np.floor(b).astype(int), np.ceil(b).astype(int)
            for j in range(A):
                if l[j] == u[j]: m[n, l[j]] += pn[j]
                else: m[n, l[j]] += pn[j] * (u[j] - b[j]); m[n, u[j]] += pn[j] * (b[j] - l[j])
        logp = torch.log_softmax((o @ W.reshape(3, 2 * A)).reshape(N, 2, A), -1)[torch.arange(N), a]
        loss = -(torch.tensor(m) * logp).sum(-1).mean()
        gW, = torch.autograd.grad(loss, W)
        e = [abs(loss.item() - train[it]["loss"]), np.abs(m[0] - train[it]["m0"]).max(), np.abs(m.sum(-1) - train[it]["msum"]).max()]
        print(it, loss.item(), train[it]["loss"], e)
        assert max(e) < 1e-5
        with torch.no_grad(): W = (W - 0.5 * gW).requires_grad_(True)
    print("ok: c51")

def check_nstep():
    L = [json.loads(l) for l in open(path)]
    r = np.array([x["r"] for x in L], np.float64); d = [x["d"] for x in L]; T, K, g = 10, 3, 0.9
    worst, dones = 0.0, sum(d)
    for t in range(T):
        win = sum(g ** j * r[t + j] for j in range(min(K, T - t)))
        acc = r[t]; alive = 1 - d[t]
        for j in range(1, K):
            if t + j < T:
                acc += g ** j * alive * r[t + j]; alive *= 1 - d[t + j]
        worst = max(worst, abs(win - L[t]["win"]), abs(acc - L[t]["acc"]))
    assert worst < 1e-6 and dones > 0, (worst, dones)
    print("ok: nstep: both n-step forms within 1e-6,", dones, "dones")


def check_odd():
    L = [json.loads(l) for l in open(path)]
    B, T = 3, 4
    rows, ks = L[:B * T], L[B * T:]
    for b in range(B):
        for t in range(T):
            o = rows[b * T + t]; x = lambda u: 10.0 * b + u
            assert o["y"] == 2 * x(t) and o["tri"] == (1.0 if b <= t else 0.0), o
            assert o["s"] == sum(x(u) for u in range(t + 1)) == o["pre"] and o["c"] == t + 1, o
            assert o["f"] == [x(t) + 0.5 * k + 1 for k in range(2 * T)], o
    assert [k["d"] for k in ks] == [0.5 * k for k in range(2 * T) if k % 3 == 0], ks
    print("ok: odd shapes")


def check_evalroll():
    L = [json.loads(l) for l in open(path)]
    ends = {}
    for e in L:
        assert e["term"] and e["boot"] == 0.0 and e["ret"] == e["end"] - ends.get(e["env"], -1), e
        ends[e["env"]] = e["end"]
    print("ok: evalroll:", len(L), "episodes, returns = lengths")


def check_mpc():
    import gymnasium as gym
    L = [json.loads(l) for l in open(sys.argv[1])]
    env = gym.make("Pendulum-v1").unwrapped; env.reset(seed=0)
    def step(s, u):
        env.state = np.array(s, np.float64)
        _, r, _, _, _ = env.step(np.array([u], np.float32))
        return env.state.copy(), np.float32(r)
    for t, row in enumerate(L):
        U = np.array(row["u0"], np.float32)
        G = []
        for k in range(U.shape[0]):
            s, acc = row["s"], np.float32(0)
            for h in range(U.shape[1]):
                s, r = step(s, U[k, h]); acc = np.float32(acc + r)
            G.append(acc)
        G = np.array(G, np.float32)
        assert np.array_equal(G, np.array(row["G"], np.float32)), (t, G, row["G"])
        b = int(np.argmax(G)); assert np.float32(row["a"]) == U[b, 0]
        s2, r = step(row["s"], U[b, 0])
        assert r == np.float32(row["r"])
        if t + 1 < len(L): assert np.array_equal(s2, np.array(L[t + 1]["s"])), (s2, L[t+1]["s"])
    print("ok: mpc: model returns, choices and env states equal gymnasium's bit for bit")

globals()["check_" + what]()
