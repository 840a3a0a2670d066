#!/bin/sh
# worlds_dir.sh - physd run from its build tree finds the source tree's configs/worlds as its
# worlds folder (server/data_dir.c, step 3: nothing is installed beside the binary) and logs it
# as the default allowed root; with --allowed-root given, it logs that the folder is not one.
# (The installed case, DIR_OF_physd/../share/physd/worlds, is scripts/check-install.sh's.)
#   usage: worlds_dir.sh PHYSD SOURCE_ROOT
set -eu
physd=$1
want=$(realpath "$2/configs/worlds")
dir=$(mktemp -d /tmp/physd-worlds-dir.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# run N FLAGS...: start physd with the flags, wait for its "listening" line, stop it; prints
# its log. Run N logs to its own file: a reused one is truncated only in the child, after the
# waiting loop may have read the previous run's "listening" in it.
run() {
  logf=$dir/log.$1
  shift
  "$physd" --socket "$dir/s.sock" "$@" > "$logf" 2>&1 &
  pid=$!
  i=0
  until grep -q 'msg="listening"' "$logf" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 200 ] || ! kill -0 "$pid" 2>/dev/null; then
      cat "$logf" >&2
      echo "worlds_dir: physd did not start" >&2
      kill "$pid" 2>/dev/null || true
      exit 1
    fi
    sleep 0.05
  done
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$logf" >&2
    echo "worlds_dir: physd exited $rc at SIGTERM, not 0" >&2
    exit 1
  fi
  cat "$logf"
}

log=$(run 1)
echo "$log" | grep -q "msg=\"worlds directory\" dir=$want allowed_root=yes" || {
  echo "$log" >&2
  echo "worlds_dir: expected 'worlds directory dir=$want allowed_root=yes'" >&2
  exit 1
}
log=$(run 2 --allowed-root "$dir")
echo "$log" | grep -q "msg=\"worlds directory\" dir=$want allowed_root=no" || {
  echo "$log" >&2
  echo "worlds_dir: expected 'allowed_root=no' once --allowed-root is given" >&2
  exit 1
}
echo "worlds_dir: physd found $want"
