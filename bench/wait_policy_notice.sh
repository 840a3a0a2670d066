#!/bin/sh
# wait_policy_notice.sh - OMP_WAIT_POLICY=passive with two or more threads is said out loud:
# physbench prints a notice on stderr and its JSON reports omp_wait_policy, physd logs a
# warning at start; with one thread, or with the variable unset, neither says anything.
# (Passive workers sleep between a step's parallel stages: two threads gained nothing on a
# settled pile; docs/engine.md, Threads.)
# Usage: wait_policy_notice.sh PATH/TO/physbench PATH/TO/physd
set -u
physbench=$1 physd=$2
fail=0

. "$(dirname "$0")/expect.sh"

# physbench: expect_not WANT PATTERN CMD... (exit WANT, PATTERN absent)
expect_not() {
  want=$1 pattern=$2
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || printf '%s\n' "$out" | grep -q -- "$pattern"; then
    echo "FAIL: $* -> exit $rc (want $want, without '$pattern'), output: $out"
    fail=1
  else
    echo "ok: $* -> exit $rc, no '$pattern'"
  fi
}

run="$physbench builtin:box_stack_10 --steps 5 --no-sleep --json"
expect 0 'notice: OMP_WAIT_POLICY=passive' env OMP_WAIT_POLICY=passive $run --threads 2
expect 0 'notice: OMP_WAIT_POLICY=passive' env OMP_WAIT_POLICY=PASSIVE $run --threads 2
expect 0 '"omp_wait_policy":"passive"' env OMP_WAIT_POLICY=passive $run --threads 2
expect_not 0 'OMP_WAIT_POLICY=passive' env OMP_WAIT_POLICY=passive $run --threads 1
expect_not 0 'notice: OMP_WAIT_POLICY' env -u OMP_WAIT_POLICY $run --threads 2
expect 0 '"omp_wait_policy":""' env -u OMP_WAIT_POLICY $run --threads 2

# physd: its log until the world is loaded (then stopped)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
physd_log() { # THREADS ENV...
  threads=$1
  shift
  rm -f "$dir/s.sock" "$dir/log"
  env "$@" "$physd" --socket "$dir/s.sock" --threads "$threads" >"$dir/log" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 100 ] && ! grep -q "world loaded" "$dir/log"; do sleep 0.05; i=$((i + 1)); done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  cat "$dir/log"
}
check_physd() { # WANT(1 warning, 0 none) THREADS ENV...
  want=$1
  shift
  log=$(physd_log "$@")
  if ! printf '%s\n' "$log" | grep -q "world loaded"; then
    echo "FAIL: physd --threads $1 did not start: $log"
    fail=1
    return
  fi
  got=0
  printf '%s\n' "$log" | grep -q "OMP_WAIT_POLICY=passive" && got=1
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: physd --threads $*: warning $got, want $want: $log"
    fail=1
  else
    echo "ok: physd --threads $*: warning $got"
  fi
}
check_physd 1 2 OMP_WAIT_POLICY=passive
check_physd 0 1 OMP_WAIT_POLICY=passive
check_physd 0 2 -u OMP_WAIT_POLICY
exit $fail
