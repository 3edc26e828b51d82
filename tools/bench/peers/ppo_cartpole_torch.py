#!/usr/bin/env python3
"""ppo_cartpole_torch.py — the PyTorch arms for samples/ppo_cartpole.trl: CleanRL's ppo.py on
CartPole-v1 on the CPU, same hyperparameters, no TensorBoard/W&B/video; eager, or with
--compile the minibatch update (forward, loss, backward, grad clipping, Adam) under
torch.compile and the rollout eager.

CleanRL's algorithm (vwxyzjn/cleanrl ppo.py):
4 envs × 128 steps per iteration, GAE(γ 0.99, λ 0.95), 4 epochs × 4 minibatches of 128,
clip 0.2 (ratio and value), entropy 0.01, value 0.5, grad-norm 0.5, Adam 2.5e-4 (eps 1e-5)
annealed linearly per iteration, per-minibatch advantage normalization, separate 4-64-64 tanh
actor and critic with orthogonal init (√2, √2, 0.01 / 1.0).  Environments: gymnasium's own
CartPole-v1 in a SyncVectorEnv with same-step autoreset (CleanRL's gymnasium 0.29 semantics,
and what samples/ppo_cartpole.trl does).

--compile: the update is one function compiled by torch.compile (Inductor; it needs a C++
compiler), with Adam's learning rate a tensor (capturable=True) so annealing it does not
recompile.  It is compiled before the training clock starts, by two calls on a random
minibatch, after which the parameters and Adam's state are put back to their initial values in
place ("compile_seconds"); a recompilation during training is an error.  If torch.compile
fails, the script exits with status 3 and says why on stderr.

Writes one JSON line per finished episode ({"step", "episodic_return", "episodic_length"}, the
fields samples/ppo_cartpole.trl writes, so tools/trl_metrics.py reads both) to --log, and at the
end one summary line on stdout:
    {"env_steps", "train_seconds" (wall time of the training loop, startup excluded),
     "train_cpu_seconds" (CPU time of the training loop, all threads), "cpu_seconds" (the whole
     process, torch's import included), "max_rss_kb", "threads", "compile_seconds" (0 eager)}

    python3 tools/bench/peers/ppo_cartpole_torch.py --iterations 977 --log torch.jsonl
    python3 tools/bench/peers/ppo_cartpole_torch.py --iterations 977 --compile
"""
import argparse
import json
import resource
import sys
import time

import gymnasium as gym
import numpy as np
import torch
import torch._dynamo
import torch._inductor.config
import torch.nn as nn


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(4, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(4, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, 2), std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=977, help="977 × 512 = 500,224 env steps")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--log", default=None, help="JSON Lines of finished episodes")
    ap.add_argument("--compile", action="store_true", help="torch.compile the minibatch update")
    a = ap.parse_args()

    num_envs, num_steps, epochs, minibatches = 4, 128, 4, 4
    gamma, lam, clip, ent_coef, vf_coef, max_grad_norm, lr0 = 0.99, 0.95, 0.2, 0.01, 0.5, 0.5, 2.5e-4
    batch = num_envs * num_steps
    mb_size = batch // minibatches

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    torch.backends.cudnn.deterministic = True
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(num_envs)],
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    agent = Agent()
    if a.compile:  # a tensor learning rate: changing it does not recompile
        optimizer = torch.optim.Adam(agent.parameters(), lr=torch.tensor(lr0), eps=1e-5,
                                     capturable=True)
    else:
        optimizer = torch.optim.Adam(agent.parameters(), lr=lr0, eps=1e-5)

    def update(mb_obs, mb_actions, mb_logprobs, mb_adv, mb_returns, mb_values):
        """One minibatch: CleanRL's loss, backward, grad-norm clipping, Adam step."""
        _, newlogprob, entropy, newvalue = agent.get_action_and_value(mb_obs, mb_actions)
        ratio = (newlogprob - mb_logprobs).exp()
        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
        pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
        newvalue = newvalue.view(-1)
        v_unclipped = (newvalue - mb_returns) ** 2
        v_clipped = mb_values + torch.clamp(newvalue - mb_values, -clip, clip)
        v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - mb_returns) ** 2).mean()
        loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
        optimizer.step()
        return loss.detach()

    compile_seconds = 0.0
    if a.compile:
        torch._inductor.config.compile_threads = 1  # no pool of compile workers beside the run
        update = torch.compile(update)
        initial = [p.detach().clone() for p in agent.parameters()]
        t0 = time.perf_counter()
        try:
            g = torch.Generator().manual_seed(12345)
            for _ in range(2):  # the second call catches a recompilation after Adam's state exists
                update(torch.randn(mb_size, 4, generator=g),
                       torch.randint(0, 2, (mb_size,), generator=g),
                       -torch.rand(mb_size, generator=g), torch.randn(mb_size, generator=g),
                       torch.randn(mb_size, generator=g), torch.randn(mb_size, generator=g))
        except Exception as err:  # noqa: BLE001  (any compiler failure skips the arm)
            sys.stderr.write(f"ppo_cartpole_torch.py: torch.compile failed: "
                             f"{type(err).__name__}: {str(err).splitlines()[0][:300]}\n")
            sys.exit(3)
        compile_seconds = time.perf_counter() - t0
        with torch.no_grad():  # back to the initial parameters and an empty Adam state
            for p, p0 in zip(agent.parameters(), initial):
                p.copy_(p0)
            for st in optimizer.state.values():
                for v in st.values():
                    v.zero_()
        torch._dynamo.config.error_on_recompile = True
    log = open(a.log, "w") if a.log else None

    obs = torch.zeros((num_steps, num_envs, 4))
    actions = torch.zeros((num_steps, num_envs))
    logprobs = torch.zeros((num_steps, num_envs))
    rewards = torch.zeros((num_steps, num_envs))
    dones = torch.zeros((num_steps, num_envs))
    values = torch.zeros((num_steps, num_envs))

    t0, c0 = time.perf_counter(), time.process_time()
    global_step = 0
    next_obs, _ = envs.reset(seed=a.seed)
    next_obs = torch.Tensor(next_obs)
    next_done = torch.zeros(num_envs)
    ep_ret = np.zeros(num_envs)
    ep_len = np.zeros(num_envs, dtype=np.int64)
    for iteration in range(1, a.iterations + 1):
        frac = 1.0 - (iteration - 1.0) / a.iterations
        if a.compile:
            optimizer.param_groups[0]["lr"].fill_(frac * lr0)
        else:
            optimizer.param_groups[0]["lr"] = frac * lr0
        for step in range(num_steps):
            global_step += num_envs
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            o, r, term, trunc, _ = envs.step(action.cpu().numpy())
            done = np.logical_or(term, trunc)
            rewards[step] = torch.tensor(r).view(-1)
            next_obs, next_done = torch.Tensor(o), torch.Tensor(done.astype(np.float32))
            ep_ret += r
            ep_len += 1
            for e in np.nonzero(done)[0]:
                if log:
                    log.write(json.dumps({"step": global_step, "episodic_return": float(ep_ret[e]),
                                          "episodic_length": int(ep_len[e])}) + "\n")
                ep_ret[e], ep_len[e] = 0.0, 0
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
            returns = advantages + values
        b_obs, b_logprobs = obs.reshape((-1, 4)), logprobs.reshape(-1)
        b_actions, b_advantages = actions.reshape(-1), advantages.reshape(-1)
        b_returns, b_values = returns.reshape(-1), values.reshape(-1)
        b_inds = np.arange(batch)
        for _ in range(epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch, mb_size):
                mb = b_inds[start:start + mb_size]
                update(b_obs[mb], b_actions.long()[mb], b_logprobs[mb], b_advantages[mb],
                       b_returns[mb], b_values[mb])
    train_seconds, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    if log:
        log.close()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"env_steps": global_step, "train_seconds": round(train_seconds, 3),
                      "train_cpu_seconds": round(train_cpu, 3),
                      "cpu_seconds": round(ru.ru_utime + ru.ru_stime, 3),
                      "max_rss_kb": ru.ru_maxrss, "threads": a.threads,
                      "compile_seconds": round(compile_seconds, 3)}))


if __name__ == "__main__":
    main()
