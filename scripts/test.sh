#!/bin/sh
# test.sh - install the dependencies, build and run every test suite.
#
# This is the test command of README.md, and the one .ci/run runs for both of its builds.
#   BUILD_DIR   build directory (default: build)
#   MESON_ARGS  options for `meson setup` of a new directory, or `meson configure` of an
#               existing one (default: none), e.g. "--buildtype=debugoptimized -Dwerror=true"
# Extra arguments are passed to `meson test` (a suite name, --timeout-multiplier 3, ...).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
args=${MESON_ARGS:-}

scripts/install-deps.sh
# shellcheck disable=SC2086  # MESON_ARGS is a list of options
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" $args
elif [ -n "$args" ]; then
  meson configure "$build" $args
fi
ninja -C "$build"
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
