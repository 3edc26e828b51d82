#!/usr/bin/env python3
"""Draw learning curves from the JSON Lines metrics of generated trlc programs.

Reads one or more logs written by `PROGRAM --log FILE` and plots, for each, the moving mean
of the episode return over the last WINDOW finished episodes (default 100, CleanRL's and
gymnasium's convention) against env steps, or against the episode index with --x episode.
A line is an episode when it has a return field ("episodic_return", or "return"); its env
step is its "step" field (or "env_steps").  Logs without per-episode lines fall back to the
per-iteration lines that carry "env_steps" and "mean_return" (plotted as they are).  Other
lines (e.g. "train") are ignored.  The figure is written with matplotlib's Agg backend (no
display needed) to --output (PNG).  Prints, per log, the final moving mean and the first env
step at which it reached --threshold (if given).

usage: tools/plot_learning_curve.py LOG [LOG...] [-o curve.png] [--window 100]
                                    [--x step|episode] [--threshold 475] [--title T]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trl_metrics  # noqa: E402  (tools/trl_metrics.py: the JSON Lines reader)


def read_episodes(path):
    """Returns (steps, returns, kind): per-episode points, or per-iteration fallbacks."""
    m = trl_metrics.read(path)
    episodes = list(m.episodes)
    if episodes:
        # Lines of one program are in point order; sort by step (stable) so that episodes
        # emitted in another order still form a curve over time.
        if all(s is not None for s, _ in episodes):
            episodes.sort(key=lambda p: p[0])
        return [s for s, _ in episodes], [r for _, r in episodes], "episode"
    if m.iterations:
        return [s for s, _ in m.iterations], [r for _, r in m.iterations], "iteration"
    sys.exit(f"{path}: no episode lines (a field {' or '.join(trl_metrics.RETURN_KEYS)}) "
             "and no iteration lines with env_steps and mean_return")


def moving_mean(values, window):
    out, acc = [], 0.0
    for j, v in enumerate(values):
        acc += v
        if j >= window:
            acc -= values[j - window]
        out.append(acc / min(j + 1, window))
    return out


def main():
    ap = argparse.ArgumentParser(
        description="Plot the moving mean episode return of trlc JSON Lines logs to a PNG.",
        epilog="Example: tools/plot_learning_curve.py ppo_cartpole.jsonl -o ppo_cartpole.png")
    ap.add_argument("logs", nargs="+", metavar="LOG", help="JSON Lines metrics files")
    ap.add_argument("-o", "--output", default="learning_curve.png", help="PNG to write")
    ap.add_argument("--window", type=int, default=100,
                    help="episodes in the moving mean (default 100)")
    ap.add_argument("--x", choices=("step", "episode"), default="step",
                    help="x axis: env steps (default) or episode index")
    ap.add_argument("--threshold", type=float, default=None,
                    help="draw this return as a line and report when the mean first reaches it")
    ap.add_argument("--title", default=None, help="figure title")
    ap.add_argument("--label", action="append", default=None,
                    help="legend label per log (repeat; default: file names)")
    args = ap.parse_args()
    if args.window < 1:
        sys.exit("--window must be at least 1")
    if args.label and len(args.label) != len(args.logs):
        sys.exit("give one --label per log")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for n, path in enumerate(args.logs):
        steps, returns, kind = read_episodes(path)
        mm = moving_mean(returns, args.window) if kind == "episode" else returns
        if args.x == "episode" or steps[0] is None:
            xs = list(range(1, len(mm) + 1))
        else:
            xs = steps
        label = args.label[n] if args.label else os.path.basename(path)
        ax.plot(xs, mm, label=label, linewidth=1.4)
        msg = f"{path}: {len(returns)} {kind}s, final mean return " \
              f"{mm[-1]:.2f}" + (f" over the last {min(args.window, len(mm))}"
                                 if kind == "episode" else "")
        if args.threshold is not None:
            # An episode mean counts once its window is full (the last WINDOW episodes).
            first = args.window - 1 if kind == "episode" else 0
            hit = next((x for j, (x, m) in enumerate(zip(xs, mm))
                        if j >= first and m >= args.threshold), None)
            msg += f"; reached {args.threshold:g} at " + \
                (f"{'episode' if xs is not steps else 'env step'} {hit}" if hit is not None
                 else "no point")
        print(msg)
    if args.threshold is not None:
        ax.axhline(args.threshold, color="gray", linestyle="--", linewidth=0.8)
    ax.set_xlabel("env steps" if args.x == "step" else "episode")
    ax.set_ylabel(f"mean return (last {args.window} episodes)")
    if args.title:
        ax.set_title(args.title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
