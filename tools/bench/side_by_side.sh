#!/usr/bin/env bash
# tools/bench/side_by_side.sh OLD_TRLC NEW_TRLC — each training sample built by both compilers at a reduced
# iteration count, run alternately 3 times each on one core; prints user+sys CPU seconds.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
old=$1; new=$2; w=/tmp/sbs; mkdir -p $w
declare -A iters=([ppo_cartpole]=60 [reinforce_cartpole]=20 [nstep_cartpole]=400 [ppo_pendulum]=15)
for s in ppo_cartpole reinforce_cartpole nstep_cartpole ppo_pendulum; do
  for v in old new; do
    t=$([ $v = old ] && echo $old || echo $new)
    $t $root/samples/$s.trl -D I=${iters[$s]} --runtime-bound=none --target=host -o $w/$s.$v >/dev/null 2>&1 || echo "build $s $v failed"
  done
  for r in 1 2 3; do
    for v in old new; do
      c=$( { /usr/bin/time -f '%U %S' taskset -c 0 $w/$s.$v --threads 1 --log $w/$s.$v.jsonl --quiet >/dev/null; } 2>&1 | tail -1 | awk '{print $1+$2}')
      echo "$s I=${iters[$s]} $v run$r cpu=$c"
    done
  done
  cmp -s <(grep -v '"train"' $w/$s.old.jsonl | head -50) <(grep -v '"train"' $w/$s.new.jsonl | head -50) && echo "$s: first episode records identical" || echo "$s: episode records differ (expected: f32 math changed)"
done
