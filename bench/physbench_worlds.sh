#!/bin/sh
# physbench_worlds.sh - physbench --worlds N end to end: a batch of N copies of the scene reports
# env_steps_per_s and a hash of all worlds, its world 0 ends bit for bit where a lone run does
# (the same state_hash on 1 and 2 threads), and a bad count is a usage error (exit 2) naming the
# flag.
# Usage: physbench_worlds.sh PATH/TO/physbench
set -u
physbench=$1
fail=0

. "$(dirname "$0")/expect.sh"

run="$physbench builtin:box_stack_10 --steps 30 --warmup 10 --no-sleep --json"
expect 0 '"env_steps_per_s":' $run --threads 2 --worlds 3
expect 0 '"state_hash_worlds":' $run --threads 1 --worlds 2
expect 2 'invalid --worlds' $run --threads 1 --worlds 0
expect 2 'invalid --worlds' $run --threads 1 --worlds many

# world 0 of a batch is the lone world, whatever the batch size and thread count
hash_of() {
  "$@" 2>/dev/null | sed -n 's/.*"state_hash":"\([0-9a-f]*\)".*/\1/p'
}
lone=$(hash_of $run --threads 1)
one=$(hash_of $run --threads 1 --worlds 4)
two=$(hash_of $run --threads 2 --worlds 5)
if [ -z "$lone" ] || [ "$lone" != "$one" ] || [ "$lone" != "$two" ]; then
  echo "FAIL: world 0's state_hash differs from the lone world's: '$lone' '$one' '$two'"
  fail=1
else
  echo "ok: world 0 of 4 (1 thread) and of 5 (2 threads) ends as the lone world ($lone)"
fi
exit $fail
