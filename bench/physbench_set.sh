#!/bin/sh
# physbench_set.sh - physbench's --set NAME=VALUE end to end: the option reaches the solver (the
# JSON's solver_options lists it, and canal.newton_max=1 changes CANAL's Newton count), the
# README's aliases (--penalty, --beta-scale, --alpha) set the same options, and a bad name or
# value is a usage error (exit 2) naming the option.
# Usage: physbench_set.sh PATH/TO/physbench
set -u
physbench=$1
fail=0

. "$(dirname "$0")/expect.sh"

run="$physbench builtin:box_stack_10 --steps 20 --threads 1 --no-sleep --json"
expect 0 '"solver_options":{"canal.beta0":10000, "canal.beta_scale":7,' \
  $run --solver canal --set canal.beta_scale=7
expect 0 '"canal.newton_max":1,' $run --solver canal --set canal.newton_max=1
expect 0 '"solver_options":{"subadmm.penalty_rule":1, "subadmm.beta_scale":2, "subadmm.over_relaxation":1.5,' \
  $run --penalty paper --beta-scale 2 --alpha 1.5
expect 0 '"subadmm.penalty_rule":1,' $run --set subadmm.penalty_rule=paper
expect 0 '"solver_options":{"pgs.relaxation":1.25, "pgs.dense_rows":48}' $run --solver pgs --set pgs.relaxation=1.25
expect 0 'canal.newton_tol' "$physbench" --list-solvers
expect 2 'canal.zeta must be in (0, 1)' $run --set canal.zeta=1
expect 2 'unknown solver option "canal.nope"' $run --set canal.nope=1
expect 2 'subadmm.over_relaxation must be in \[1, 2)' $run --alpha 2
expect 2 'invalid --set' $run --set canal.kappa
expect 2 'canal.beta_max must be >= canal.beta0' $run --set canal.beta_max=10

# canal.newton_max=1 changes what CANAL does: a different Newton count per step
n_default=$($run --solver canal | sed -n 's/.*"newton_iterations_per_step":\([0-9.e+-]*\).*/\1/p')
n_one=$($run --solver canal --set canal.newton_max=1 | sed -n 's/.*"newton_iterations_per_step":\([0-9.e+-]*\).*/\1/p')
echo "CANAL Newton steps per step: default $n_default, newton_max=1 $n_one"
if [ -z "$n_default" ] || [ -z "$n_one" ] || [ "$n_default" = "$n_one" ]; then
  echo "FAIL: canal.newton_max=1 did not change the Newton count"
  fail=1
fi
exit $fail
