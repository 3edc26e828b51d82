#!/usr/bin/env python3
"""dqn_cartpole_jax.py — the JAX arm for samples/dqn_cartpole.trl: DQN on CartPole-v1 with the
whole training (every env step, buffer write and update) under one jax.jit, the way PureJaxRL
runs it, on one CPU thread.  Written for this project from the algorithm (CleanRL's dqn.py
hyperparameters, gymnasium's classic_control/cartpole.py for the dynamics).

Same algorithm and hyperparameters as samples/dqn_cartpole.trl: one environment, a 4-120-84-2
ReLU Q-network with torch's default nn.Linear init (W and b uniform in ±1/sqrt(fan_in)), Adam
2.5e-4 (optax, eps 1e-8 as torch), a circular replay buffer of the last 10,000 transitions
sampled uniformly with replacement, batch 128, MSE TD loss against a target network copied
every 500 steps (tau = 1), terminated (not truncated) cuts the bootstrap, epsilon-greedy from 1.0
to 0.05 over the first half of the steps, learning after step 10,000, an update every 10 steps.
The update and the target copy are lax.cond branches inside the lax.scan over the steps, so
XLA runs them only at those steps (as the trlc sample's guards do).

CartPole-v1 is inlined in float32 (gymnasium's equations and Euler order, 500-step limit), with
same-step autoreset; the buffer keeps the real next observation, as CleanRL's real_next_obs.
Random numbers are JAX's threefry keys, so episodes differ from the trlc arm's.

Threads, timing and output as peers/ppo_cartpole_jax.py: XLA on one thread, compiled ahead of
time ("compile_seconds"), the compiled call timed to block_until_ready ("train_seconds" wall,
"train_cpu_seconds"), episode records written to --log afterwards (JSON Lines {"step",
"episodic_return", "episodic_length"}).  Last stdout line: one JSON summary
    {"env_steps", "compile_seconds", "train_seconds", "train_cpu_seconds", "max_rss_kb", "jax"}

    pip install jax optax                       # benchmarks only, not in tools/setup.sh
    python3 tools/bench/peers/dqn_cartpole_jax.py --steps 500000 --log jax.jsonl
Exit status 3 with a message on stderr when jax or optax is missing.
"""
import argparse
import json
import resource
import sys
import time

from jax_cartpole import MAX_STEPS, cartpole_step, jax, jnp, optax  # one XLA thread, CartPole-v1

BUF, BS, LS, F, C = 10000, 128, 10000, 10, 500   # buffer, batch, learning starts, train freq, target freq
GAMMA, LR, START_E, END_E, EXPLORATION_FRACTION = 0.99, 2.5e-4, 1.0, 0.05, 0.5


def env_reset(key):
    return jax.random.uniform(key, (4,), jnp.float32, -0.05, 0.05)


def torch_init(key, sizes):
    """[(W [in, out], b [out])], W and b uniform in ±1/sqrt(in) (torch nn.Linear's default)."""
    layers = []
    for k, n_in, n_out in zip(jax.random.split(key, len(sizes) - 1), sizes[:-1], sizes[1:]):
        kw, kb = jax.random.split(k)
        a = 1.0 / n_in ** 0.5
        layers.append((jax.random.uniform(kw, (n_in, n_out), jnp.float32, -a, a),
                       jax.random.uniform(kb, (n_out,), jnp.float32, -a, a)))
    return layers


def q_net(layers, x):
    for w, b in layers[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = layers[-1]
    return x @ w + b


def td_loss(params, target, batch):
    obs, act, rew, term, obs2 = batch
    target_max = q_net(target, obs2).max(axis=1)
    td_target = rew + GAMMA * target_max * (1.0 - term)
    old_val = jnp.take_along_axis(q_net(params, obs), act[:, None], axis=1)[:, 0]
    return jnp.mean((jax.lax.stop_gradient(td_target) - old_val) ** 2)


def make_train(steps):
    tx = optax.adam(LR)
    slope = (END_E - START_E) / (EXPLORATION_FRACTION * steps)

    def update(args):
        params, opt_state, target, buf, key = args
        idx = jax.random.randint(key, (BS,), 0, BUF)
        batch = tuple(x[idx] for x in buf)
        grads = jax.grad(td_loss)(params, target, batch)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    def step(carry, t):
        params, opt_state, target, buf, s, el, ep_ret, key = carry
        key, k_eps, k_rand, k_reset, k_batch = jax.random.split(key, 5)
        eps = jnp.maximum(slope * t + START_E, END_E)
        greedy = jnp.argmax(q_net(params, s))
        act = jnp.where(jax.random.uniform(k_eps) < eps, jax.random.randint(k_rand, (), 0, 2), greedy)
        s2, term = cartpole_step(s, act)
        done = term | (el + 1 >= MAX_STEPS)
        slot = t % BUF
        buf = (buf[0].at[slot].set(s), buf[1].at[slot].set(act), buf[2].at[slot].set(1.0),
               buf[3].at[slot].set(term.astype(jnp.float32)), buf[4].at[slot].set(s2))
        learn = t > LS
        params, opt_state = jax.lax.cond(learn & (t % F == 0), update, lambda a: (a[0], a[1]),
                                         (params, opt_state, target, buf, k_batch))
        target = jax.lax.cond(learn & (t % C == 0), lambda a: a[0], lambda a: a[1], (params, target))
        ep_ret2 = ep_ret + 1.0
        record = (done, ep_ret2, el + 1)
        carry = (params, opt_state, target, buf, jnp.where(done, env_reset(k_reset), s2),
                 jnp.where(done, 0, el + 1), jnp.where(done, 0.0, ep_ret2), key)
        return carry, record

    def train(key):
        key, k_init, k_reset = jax.random.split(key, 3)
        params = torch_init(k_init, [4, 120, 84, 2])
        buf = (jnp.zeros((BUF, 4), jnp.float32), jnp.zeros((BUF,), jnp.int32),
               jnp.zeros((BUF,), jnp.float32), jnp.zeros((BUF,), jnp.float32),
               jnp.zeros((BUF, 4), jnp.float32))
        carry = (params, tx.init(params), params, buf, env_reset(k_reset), jnp.int32(0),
                 jnp.float32(0.0), key)
        (params, *_), records = jax.lax.scan(step, carry, jnp.arange(steps, dtype=jnp.int32))
        return params, records

    return train


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=500000, help="env steps (CleanRL total_timesteps)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default=None, help="JSON Lines of finished episodes")
    a = ap.parse_args()
    if a.steps <= LS:
        sys.exit(f"dqn_cartpole_jax.py: --steps must exceed learning_starts = {LS}")

    key = jax.random.key(a.seed)
    t0 = time.perf_counter()
    compiled = jax.jit(make_train(a.steps)).lower(key).compile()
    compile_seconds = time.perf_counter() - t0

    t0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(compiled(key))
    train_seconds, train_cpu = time.perf_counter() - t0, time.process_time() - c0

    done, ep_ret, ep_len = (jax.device_get(x) for x in out[1])   # [steps] each
    if a.log:
        with open(a.log, "w") as log:
            for t in done.nonzero()[0]:
                log.write(json.dumps({"step": int(t + 1), "episodic_return": float(ep_ret[t]),
                                      "episodic_length": int(ep_len[t])}) + "\n")
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"env_steps": a.steps, "compile_seconds": round(compile_seconds, 3),
                      "train_seconds": round(train_seconds, 3),
                      "train_cpu_seconds": round(train_cpu, 3), "max_rss_kb": ru.ru_maxrss,
                      "jax": jax.__version__}))


if __name__ == "__main__":
    main()
