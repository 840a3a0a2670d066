#!/bin/sh
# run.sh - install the dependencies, build into build/ and run the main job: the physd daemon
# with the default world (configs/worlds/default.xml), in real time, on a Unix socket.
#
# Connect from another shell, for example:
#   build/clients/c/physctl --socket /tmp/physd-$(id -u).sock info
#   build/clients/c/physctl --socket /tmp/physd-$(id -u).sock watch --hz 10 --count 20
# Extra arguments go to physd (see `build/server/physd --help`); Ctrl-C stops it.
set -eu
cd "$(dirname "$0")/.."

{
  scripts/install-deps.sh
  if [ ! -f build/build.ninja ]; then
    meson setup build
  fi
  ninja -C build
} >&2
sock="${PHYSD_SOCKET:-/tmp/physd-$(id -u).sock}"
echo "run.sh: physd on unix:$sock; connect with: build/clients/c/physctl --socket $sock info" >&2
exec build/server/physd --config configs/physd.conf --world configs/worlds/default.xml \
  --socket "$sock" --mode realtime --threads 2 "$@"
