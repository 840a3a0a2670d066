#!/bin/sh
# mjbench_errors.sh - check mjbench's error exits: a missing file is exit 1 with a message naming
# the file, bad arguments are exit 2 with a usage line. Usage: mjbench_errors.sh PATH/TO/mjbench
set -u
mjbench=$1
missing=/nonexistent/mjbench-no-such-file.xml
fail=0

# Run "$@", expect exit status $1 and stderr containing $2.
expect() {
  want=$1 pattern=$2
  shift 2
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! printf '%s\n' "$err" | grep -q -- "$pattern"; then
    echo "FAIL: $* -> exit $rc (want $want), stderr: $err"
    fail=1
  else
    echo "ok: $* -> exit $rc"
  fi
}

expect 1 "cannot load $missing" "$mjbench" "$missing" --steps 10
expect 2 "usage: mjbench" "$mjbench" --steps 10
expect 2 "invalid --steps" "$mjbench" "$missing" --steps 0
expect 2 "unknown option" "$mjbench" "$missing" --steps 10 --threads 2
exit $fail
