#!/bin/sh
# physbench_urdf_flags.sh - physbench's URDF load flags end to end: --repair-inertia,
# --base-pos and --base-quat reach phys_load_options (the robots of tests/data/urdf load, and the
# notices say so), and bad values are usage errors (exit 2) whose message names the flag.
# Usage: physbench_urdf_flags.sh PATH/TO/physbench PATH/TO/tests/data/urdf
set -u
physbench=$1
data=$2
quad=$data/quadruped_lg.urdf
anymal=$data/anymal_like.urdf
fail=0

. "$(dirname "$0")/expect.sh"

run="$physbench --steps 5 --threads 1 --json"
# the options take effect
expect 0 "starting at (0, 0, 0.62) with orientation (0.707107, 0, 0, 0.707107)" \
  $run "$quad" --floating-base --ground --base-pos 0,0,0.62 --base-quat 0.7071067811865476,0,0,0.7071067811865476
expect 0 "norm 2: normalised to (1, 0, 0, 0)" $run "$quad" --floating-base --base-quat 2,0,0,0
expect 1 "repair_inertia=1 repairs it" $run "$anymal" --floating-base
expect 0 "repaired to" $run "$anymal" --floating-base --repair-inertia --base-pos 0,0,0.6
# usage errors name the flag
expect 2 "invalid --base-pos" $run "$quad" --floating-base --base-pos 0,0
expect 2 "invalid --base-pos" $run "$quad" --floating-base --base-pos 0,0,1,2
expect 2 "invalid --base-pos" $run "$quad" --floating-base --base-pos 0,0,inf
expect 2 "invalid --base-pos" $run "$quad" --floating-base --base-pos a,b,c
expect 2 "invalid --base-quat" $run "$quad" --floating-base --base-quat 1,0,0
expect 2 "invalid --base-quat (the zero quaternion" $run "$quad" --floating-base --base-quat 0,0,0,0
expect 2 "invalid --base-quat" $run "$quad" --floating-base --base-quat 1,0,0,nan
expect 2 "\-\-base-pos needs --floating-base" $run "$quad" --base-pos 0,0,1
expect 2 "\-\-base-quat needs --floating-base" $run "$quad" --base-quat 1,0,0,0
expect 2 "apply to model files only" $run builtin:sphere_drop --repair-inertia
expect 2 "missing value for option '--base-pos'" $run "$quad" --floating-base --base-pos
expect 0 "\-\-repair-inertia" "$physbench" --help
exit $fail
