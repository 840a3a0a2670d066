# expect.sh - sourced by the bench end-to-end scripts (physbench_set.sh, physbench_worlds.sh,
# wait_policy_notice.sh,
# physbench_urdf_flags.sh, mjbench_errors.sh): expect WANT PATTERN CMD... runs CMD, expects exit status WANT and
# stdout + stderr containing PATTERN (grep), prints ok or FAIL, and sets fail=1 on a mismatch.
expect() {
  want=$1 pattern=$2
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
    echo "FAIL: $* -> exit $rc (want $want, '$pattern'), output: $out"
    fail=1
  else
    echo "ok: $* -> exit $rc"
  fi
}
