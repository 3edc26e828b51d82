#!/usr/bin/env python3
"""ppo_cartpole_jax.py — the JAX arm for samples/ppo_cartpole.trl: PPO on CartPole-v1 with the
whole training (every rollout and update of every iteration) under one jax.jit, the way
PureJaxRL runs it, on one CPU thread.  Written for this project from the algorithm (CleanRL's
ppo.py hyperparameters, gymnasium's classic_control/cartpole.py for the dynamics).

Same algorithm and hyperparameters as samples/ppo_cartpole.trl and peers/ppo_cartpole_torch.py:
E = 4 envs × T = 128 steps per iteration, GAE(γ 0.99, λ 0.95) where a done (terminated or
truncated) cuts the bootstrap, 4 epochs × 4 minibatches of 128 (one permutation per epoch),
clip 0.2 (ratio and value), entropy 0.01, value 0.5, global grad-norm 0.5, Adam (eps 1e-5,
optax) with 2.5e-4 annealed linearly per iteration to 0, advantages normalized per minibatch
(unbiased std, + 1e-8), separate 4-64-64 tanh actor and critic, orthogonal init (gain √2, √2,
actor head 0.01, critic head 1), zero biases.

CartPole-v1 is inlined in float32 (gymnasium's equations and Euler order, gravity 9.8, masses
1.0 and 0.1, half-length 0.5, force ±10, tau 0.02, |x| > 2.4 or |θ| > 12° terminates, +1 per
step, 500-step limit truncates), with same-step autoreset: a finished env's next observation is
already its new episode's, drawn uniform(±0.05).  Random numbers are JAX's threefry keys, so
episodes differ from the other arms'; compare learning over seeds, not step by step.

Threads: XLA's CPU backend is limited to one thread (XLA_FLAGS --xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1, set by jax_cartpole.py before jax is imported; the caller pins the process to
one core with taskset or sched_setaffinity, as ppo_vs_peer.py does).

Timing: the training function is compiled ahead of time (jit(...).lower(key).compile(),
"compile_seconds"), then the compiled call is timed to block_until_ready ("train_seconds" wall,
"train_cpu_seconds" = process CPU time, all threads).  The per-step episode records come back as
arrays and are written to --log afterwards (JSON Lines {"step", "episodic_return",
"episodic_length"}, "step" = env steps over all envs when the episode ended, as trlc writes it).
Last stdout line: one JSON summary
    {"env_steps", "compile_seconds", "train_seconds", "train_cpu_seconds", "max_rss_kb", "jax"}

Needs jax and optax, for benchmarks only (not in tools/setup.sh):
    pip install jax optax
    python3 tools/bench/peers/ppo_cartpole_jax.py --iterations 977 --log jax.jsonl
Exit status 3 with a message on stderr when jax or optax is missing.
"""
import argparse
import json
import resource
import time

from jax_cartpole import MAX_STEPS, cartpole_step, jax, jnp, optax  # one XLA thread, CartPole-v1

E, T = 4, 128                   # environments, steps per rollout
N, EPOCHS, MB = E * T, 4, 4     # batch 512, 4 epochs × 4 minibatches
M = N // MB                     # minibatch size 128
GAMMA, LAM, CLIP = 0.99, 0.95, 0.2
ENT, VF, MAX_NORM, LR0 = 0.01, 0.5, 0.5, 2.5e-4


def env_reset(key):
    """[E, 4] float32 states drawn uniform(-0.05, 0.05)."""
    return jax.random.uniform(key, (E, 4), jnp.float32, -0.05, 0.05)


def env_step(s, t, action, key):
    """One step of E envs with same-step autoreset.  s: [E, 4] (x, ẋ, θ, θ̇), t: [E] int32 steps
    since reset, action: [E] in {0, 1}.  Returns (next state (reset where done), next t,
    reward [E], done [E] = terminated or truncated)."""
    s2, terminated = cartpole_step(s, action)
    t2 = t + 1
    done = terminated | (t2 >= MAX_STEPS)
    s_next = jnp.where(done[:, None], env_reset(key), s2)
    return s_next, jnp.where(done, 0, t2), jnp.ones((E,), jnp.float32), done


def mlp_init(key, sizes, gains):
    """[(W [in, out], b [out])] with orthogonal W (scaled by gain) and zero b."""
    layers = []
    for k, n_in, n_out, g in zip(jax.random.split(key, len(gains)), sizes[:-1], sizes[1:], gains):
        w = jax.nn.initializers.orthogonal(g)(k, (n_in, n_out), jnp.float32)
        layers.append((w, jnp.zeros((n_out,), jnp.float32)))
    return layers


def mlp(layers, x):
    """x @ W + b per layer, tanh between layers."""
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = layers[-1]
    return x @ w + b


def ppo_loss(params, mb):
    """CleanRL's minibatch loss: clipped policy loss − 0.01 entropy + 0.5 clipped value loss."""
    obs, act, old_logp, old_v, adv, ret = mb
    logp_all = jax.nn.log_softmax(mlp(params["actor"], obs))
    logp = jnp.take_along_axis(logp_all, act[:, None], axis=1)[:, 0]
    entropy = -jnp.sum(jnp.exp(logp_all) * logp_all, axis=1)
    v = mlp(params["critic"], obs)[:, 0]
    adv = (adv - adv.mean()) / (jnp.std(adv, ddof=1) + 1e-8)
    ratio = jnp.exp(logp - old_logp)
    pg = jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - CLIP, 1 + CLIP)).mean()
    v_clipped = old_v + jnp.clip(v - old_v, -CLIP, CLIP)
    vl = 0.5 * jnp.maximum((v - ret) ** 2, (v_clipped - ret) ** 2).mean()
    return pg - ENT * entropy.mean() + VF * vl


def make_train(iterations):
    """train(key) -> (params, per-step episode records [iterations, T, E]) for a fixed budget."""
    def lr_schedule(count):  # count = Adam updates so far; 16 per iteration
        return LR0 * (1.0 - (count // (EPOCHS * MB)) / iterations)

    tx = optax.chain(optax.clip_by_global_norm(MAX_NORM), optax.adam(lr_schedule, eps=1e-5))

    def rollout_step(carry, _):
        params, s, t, ep_ret, key = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        obs = s
        logits = mlp(params["actor"], obs)
        value = mlp(params["critic"], obs)[:, 0]
        act = jax.random.categorical(k_act, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), act[:, None], axis=1)[:, 0]
        s2, t2, rew, done = env_step(s, t, act, k_reset)
        ep_ret2 = ep_ret + rew                       # this episode's return, this step included
        record = (done, ep_ret2, t + 1)              # (episode ended, its return, its length)
        carry = (params, s2, t2, jnp.where(done, 0.0, ep_ret2), key)
        return carry, ((obs, act, logp, value, rew, done), record)

    def gae(rew, val, done, last_v):
        """Advantages and returns over T steps (arrays [T, E]), bootstrapped from last_v [E]."""
        next_v = jnp.concatenate([val[1:], last_v[None]], axis=0)
        delta = rew + GAMMA * next_v * (1.0 - done) - val

        def back(a_next, x):
            d, nd = x
            a = d + GAMMA * LAM * (1.0 - nd) * a_next
            return a, a
        _, adv = jax.lax.scan(back, jnp.zeros((E,), jnp.float32), (delta, done), reverse=True)
        return adv, adv + val

    def update_minibatch(carry, mb):
        params, opt_state = carry
        grads = jax.grad(ppo_loss)(params, mb)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), None

    def update_epoch(carry, key):
        params, opt_state, batch = carry
        perm = jax.random.permutation(key, N)
        mbs = jax.tree_util.tree_map(lambda x: x[perm].reshape((MB, M) + x.shape[1:]), batch)
        (params, opt_state), _ = jax.lax.scan(update_minibatch, (params, opt_state), mbs)
        return (params, opt_state, batch), None

    def iteration(carry, _):
        params, opt_state, s, t, ep_ret, key = carry
        (params, s, t, ep_ret, key), (traj, record) = jax.lax.scan(
            rollout_step, (params, s, t, ep_ret, key), None, T)
        obs, act, logp, val, rew, done = traj
        last_v = mlp(params["critic"], s)[:, 0]
        adv, ret = gae(rew, val, done.astype(jnp.float32), last_v)
        # The batch, env-major as trlc's (order does not matter: it is permuted per epoch).
        flat = lambda x: jnp.swapaxes(x, 0, 1).reshape((N,) + x.shape[2:])  # noqa: E731
        batch = tuple(flat(x) for x in (obs, act, logp, val, adv, ret))
        key, k_epochs = jax.random.split(key)
        (params, opt_state, _), _ = jax.lax.scan(update_epoch, (params, opt_state, batch),
                                                 jax.random.split(k_epochs, EPOCHS))
        return (params, opt_state, s, t, ep_ret, key), record

    def train(key):
        key, k_actor, k_critic, k_reset = jax.random.split(key, 4)
        params = {"actor": mlp_init(k_actor, [4, 64, 64, 2], [2 ** 0.5, 2 ** 0.5, 0.01]),
                  "critic": mlp_init(k_critic, [4, 64, 64, 1], [2 ** 0.5, 2 ** 0.5, 1.0])}
        carry = (params, tx.init(params), env_reset(k_reset), jnp.zeros((E,), jnp.int32),
                 jnp.zeros((E,), jnp.float32), key)
        (params, *_), records = jax.lax.scan(iteration, carry, None, iterations)
        return params, records

    return train


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=977, help="977 × 512 = 500,224 env steps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default=None, help="JSON Lines of finished episodes")
    a = ap.parse_args()

    key = jax.random.key(a.seed)
    t0 = time.perf_counter()
    compiled = jax.jit(make_train(a.iterations)).lower(key).compile()
    compile_seconds = time.perf_counter() - t0

    t0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(compiled(key))
    train_seconds, train_cpu = time.perf_counter() - t0, time.process_time() - c0

    done, ep_ret, ep_len = (jax.device_get(x) for x in out[1])   # [I, T, E] each
    if a.log:
        with open(a.log, "w") as log:
            for i, t, e in zip(*done.nonzero()):
                log.write(json.dumps({"step": int((i * T + t + 1) * E), "env": int(e),
                                      "episodic_return": float(ep_ret[i, t, e]),
                                      "episodic_length": int(ep_len[i, t, e])}) + "\n")
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"env_steps": a.iterations * N, "compile_seconds": round(compile_seconds, 3),
                      "train_seconds": round(train_seconds, 3),
                      "train_cpu_seconds": round(train_cpu, 3), "max_rss_kb": ru.ru_maxrss,
                      "jax": jax.__version__}))


if __name__ == "__main__":
    main()
