#!/bin/sh
# tsan.sh - build physd with ThreadSanitizer and run the tests that exercise its threads.
#
#   scripts/tsan.sh [MESON TEST ARGS...]
#
# Build directory $TSAN_BUILD_DIR (default build-tsan), set up with CC=clang,
# -Db_sanitize=thread, debugoptimized, -Dwerror=true. Under clang, OpenMP is LLVM's libomp, and
# its Archer tool (libarcher.so, from Debian's libomp-14-dev) is loaded through
# OMP_TOOL_LIBRARIES: it tells TSan what OpenMP's barriers, fork and join synchronise, so the
# solver team runs with its real thread count (no false reports, no one-thread fallback).
# Runs the meson test suites 'server' (every daemon test: the daemon under test is the TSan
# build, so its loop thread, simulation thread and solver team are checked; a report makes it
# exit 66 at SIGTERM, which the tests check) and 'threads' (the solver suites that compare
# thread counts, run in-process). Only their executables are built. No suppressions: physd's
# own code and the libraries it calls (libuv, OpenBLAS with one thread, CHOLMOD) run clean.
# Exit status: that of `meson test` (1 when a test failed), or 1 when setup or build failed
# (then no testlog.json is written). About 5 to 7 minutes on 2 cores from a clean directory.
set -eu
cd "$(dirname "$0")/.."
build=${TSAN_BUILD_DIR:-build-tsan}

archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | tail -n 1)
if [ -z "$archer" ]; then
  echo "tsan: libarcher.so not found (scripts/install-deps.sh installs libomp-14-dev)" >&2
  exit 1
fi
rm -f "$build/meson-logs/testlog.json"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Db_sanitize=thread -Db_lundef=false -Db_lto=false \
    --buildtype=debugoptimized -Dwerror=true
fi
# the executables of the two suites (and the daemon the server tests start)
targets=$(meson introspect "$build" --tests | /usr/bin/python3 -c '
import json, os, sys
build = os.path.abspath(sys.argv[1])
for t in json.load(sys.stdin):
    rel = os.path.relpath(t["cmd"][0], build)
    # built executables only: a script run by the system python3 is nothing to build
    if {s.split(":")[-1] for s in t["suite"]} & {"server", "threads"} and not rel.startswith(".."):
        print(rel)' "$build" | sort -u)
# shellcheck disable=SC2086  # one target per word
ninja -C "$build" server/physd $targets

export OMP_TOOL_LIBRARIES="$archer"
export TSAN_OPTIONS="${TSAN_OPTIONS:-ignore_noninstrumented_modules=1:second_deadlock_stack=1}"
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 2 --timeout-multiplier 3 \
  --suite server --suite threads "$@"
