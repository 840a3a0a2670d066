#!/bin/sh
# fuzz.sh - build the libFuzzer targets of fuzz/ with clang and run each for a fixed time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS per target (default 60); TARGET names among fuzz_mjcf fuzz_urdf fuzz_snapshot
# fuzz_frames fuzz_session (default: all). Each runs over its seed corpus tests/fuzz/corpus/<name>/ (read
# only) plus a scratch corpus in $FUZZ_WORK (default: a new temporary directory), where new
# inputs and crash reproducers are written; the repository is never written. A crash, leak,
# sanitizer report or timeout (-timeout, 10 s per input) stops that target: the script prints
# the reproducer's path (rerun it with `build-fuzz/fuzz/<target> FILE`) and exits 1 after the
# remaining targets ran. FUZZ_JOBS targets run at once (default: the number of cores; each
# target is one process). Build directory: $FUZZ_BUILD_DIR (default build-fuzz), set up with
# CC=clang, -Dfuzz=true, ASan + UBSan. clang comes from scripts/install-deps.sh.
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-fuzz_mjcf fuzz_urdf fuzz_snapshot fuzz_frames fuzz_session}
build=${FUZZ_BUILD_DIR:-build-fuzz}
work=${FUZZ_WORK:-$(mktemp -d /tmp/physd-fuzz.XXXXXX)}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Dfuzz=true -Dtests=false -Db_sanitize=address,undefined \
    -Db_lundef=false -Db_lto=false --buildtype=debugoptimized
fi
for t in $targets; do
  ninja -C "$build" "fuzz/$t"
done

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# one target: its log in $work/NAME.log, its exit status in $work/NAME.rc
run_target() {
  name=${1#fuzz_}
  mkdir -p "$work/$name"
  echo "fuzz: $1 for ${seconds}s (corpus $work/$name, log $work/$name.log)"
  rc=0
  "$build/fuzz/$1" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/$name-" \
    "$work/$name" "tests/fuzz/corpus/$name" >"$work/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$name.rc"
}
# FUZZ_JOBS targets at once (default: the number of cores; each target is one process;
# getconf, not nproc: nproc answers OMP_NUM_THREADS, set to 1 above)
jobs=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN)}
running=0
for t in $targets; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
done
wait
failed=0
for t in $targets; do
  name=${t#fuzz_}
  log="$work/$name.log"
  if [ "$(cat "$work/$name.rc" 2>/dev/null)" = 0 ]; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $t: ok, ${execs:-?} inputs in ${seconds}s"
  else
    failed=$((failed + 1))
    tail -n 60 "$log" >&2
    repro=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log" | tail -n 1)
    echo "fuzz: $t FAILED; reproducer: ${repro:-none written (see $log)}" >&2
  fi
done
[ "$failed" -eq 0 ]
