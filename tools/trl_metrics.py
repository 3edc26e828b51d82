"""trl_metrics.py — read the JSON Lines metrics that generated trlc programs write (`--log FILE`).

One reader for tools/plot_learning_curve.py and tools/bench/train_cartpole.py.  A log has one
JSON object per line (blank lines are skipped; a line that is not JSON stops the caller with
"FILE:LINE: not a JSON line: ..."; JSON values that are not objects are ignored):

    episode lines    a return field ("episodic_return", else "return") and an env step ("step",
                     else "env_steps", else "global_step"; None when none is there), as
                     samples/{reinforce,nstep,ppo}_cartpole.trl and ppo_pendulum.trl emit them;
    iteration lines  any other line with "env_steps" (the samples' "train" lines); those that
                     also carry "mean_return" are per-iteration points (a fallback curve for
                     programs without episode lines).

    import trl_metrics                       # with tools/ on sys.path
    m = trl_metrics.read("ppo_cartpole.jsonl")
    m.episodes    # [(step or None, return)] in log order
    m.iterations  # [(env_steps, mean_return)] in log order
    m.env_steps   # the largest iteration line's env_steps, else the largest episode step, else 0
"""
import json
import sys
from typing import List, NamedTuple, Optional, Tuple

RETURN_KEYS = ("episodic_return", "return")
STEP_KEYS = ("step", "env_steps", "global_step")


class Metrics(NamedTuple):
    episodes: List[Tuple[Optional[int], float]]
    iterations: List[Tuple[int, float]]
    env_steps: int


def read(path):
    """Reads the log at path into Metrics; exits (sys.exit with FILE:LINE) on a non-JSON line."""
    episodes, iterations, steps = [], [], 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not a JSON line: {e}")
            if not isinstance(rec, dict):
                continue
            ret = next((rec[k] for k in RETURN_KEYS if k in rec), None)
            if ret is not None:
                step = next((rec[k] for k in STEP_KEYS if k in rec), None)
                episodes.append((None if step is None else int(step), float(ret)))
            elif "env_steps" in rec:
                steps = max(steps, int(rec["env_steps"]))
                if "mean_return" in rec:
                    iterations.append((int(rec["env_steps"]), float(rec["mean_return"])))
    if not steps:
        steps = max((s for s, _ in episodes if s is not None), default=0)
    return Metrics(episodes, iterations, steps)
