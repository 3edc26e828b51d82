#!/usr/bin/env python3
"""checkpoint_kill.py — kill a training run at random moments and resume it (issue 15 point 1).

Builds a sample (default samples/ppo_cartpole.trl) for the host, runs it once uninterrupted (the
reference: its JSON Lines log and the files it saves), then runs it again with
`--checkpoint FILE --checkpoint-every N --resume`: each start is killed with SIGKILL after a
random 2-10 % of the reference's wall time, KILLS times, and started again (resuming the last
checkpoint), until a start runs to the end.  Then the log and every saved file are compared with
the reference byte for byte.  It prints how many starts resumed a checkpoint and exits 1 on any
difference.

    python3 tools/checkpoint_kill.py [--trlc build/compiler/trlc] [--sample S] [--kills 20]
        [--every 5] [--seed 0]
"""
import argparse
import filecmp
import glob
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trlc", default=os.path.join(ROOT, "build", "compiler", "trlc"))
    ap.add_argument("--sample", default=os.path.join(ROOT, "samples", "ppo_cartpole.trl"))
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--every", type=int, default=5, help="--checkpoint-every of the killed runs")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as work:
        exe = os.path.join(work, "prog")
        b = subprocess.run([a.trlc, a.sample, "-o", exe, "--target=host"], stderr=subprocess.PIPE, text=True)
        if b.returncode != 0:
            sys.exit(f"checkpoint_kill.py: building {a.sample} failed:\n{b.stderr}")
        ref, run = os.path.join(work, "ref"), os.path.join(work, "run")
        os.makedirs(ref), os.makedirs(run)
        t0 = time.perf_counter()
        subprocess.run([exe, "--quiet", "--threads", "1", "--log", "log.jsonl"], cwd=ref, check=True)
        wall = time.perf_counter() - t0
        cmd = [exe, "--threads", "1", "--log", "log.jsonl", "--checkpoint", "ck.bin", "--checkpoint-every",
               str(a.every), "--resume"]
        resumed = kills = 0
        final = None
        while True:  # one training run, killed "kills" times and resumed after each
            p = subprocess.Popen(cmd, cwd=run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if kills < a.kills:
                # a short random slice of the run (a few dozen iterations), so that the kills
                # spread over the whole training instead of finishing it
                time.sleep(rnd.uniform(0.02, 0.1) * wall)
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    kills += 1
            _, err = p.communicate()
            resumed += "resuming from the checkpoint" in err
            if p.returncode == 0:
                final = p
                break
            if p.returncode != -signal.SIGKILL:
                sys.exit(f"checkpoint_kill.py: a run failed ({p.returncode}):\n{err}")
        diffs = []
        for f in sorted(os.listdir(ref)):
            mine = os.path.join(run, f)
            if not os.path.exists(mine) or not filecmp.cmp(os.path.join(ref, f), mine, shallow=False):
                diffs.append(f)
        print(f"{os.path.relpath(a.sample, ROOT)}: one training run killed with SIGKILL {kills} times at "
              f"random moments, {resumed} restarts resumed from a checkpoint (--checkpoint-every {a.every}); "
              f"the uninterrupted run took {wall:.2f} s")
        if diffs:
            print("DIFFERENT from the uninterrupted run: " + ", ".join(diffs))
            sys.exit(1)
        print("log and saved files: byte-identical to the uninterrupted run (" +
              ", ".join(sorted(os.listdir(ref))) + ")")


if __name__ == "__main__":
    main()
