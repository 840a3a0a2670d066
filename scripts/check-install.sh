#!/bin/sh
# check-install.sh - install physd into a staging folder and use it from the installed files only.
#
#   BUILD_DIR  a configured and built build directory (default: build)
#   STAGE      the staging folder, emptied first (default: $BUILD_DIR/install-stage)
#
# 1. meson install --destdir STAGE;
# 2. every file meson says it installs is there, and so is each thing users build on: physd,
#    physctl, physbench, libphys and libphysclient (shared, with their soname links), their
#    headers and pkg-config files, physd.conf and the worlds, the manual pages, the Python
#    package with its generated physd_pb2.py, and the systemd unit when it is configured;
# 3. tests/install/hello_phys.c and hello_client.c are compiled with the STAGED pkg-config files
#    (PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR: nothing from the source or build tree) and
#    linked to the staged libraries;
# 4. the staged physd is started (no --allowed-root: it must find its staged worlds, as an
#    installed physd does); hello_client connects, loads worlds/default.xml by path, steps and
#    prints a state; tests/install/hello_client.py does the same with the staged Python package
#    only (PYTHONPATH = the staged site folder, no PHYSD_PB2_DIR);
# 5. pip builds clients/python (pyproject.toml, offline) into a folder, and hello_client.py
#    runs from there too.
# A failure names what was missing or what failed, and the script exits 1. .ci/run runs it on
# build-ci (4 to 8 s on a busy 2-core machine, 2026-11-25).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
stage=${STAGE:-$build/install-stage}
case $stage in /*) ;; *) stage=$(pwd)/$stage ;; esac
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# progress with the seconds since the start, so that CI's log shows which step takes the time
t0=$(date +%s)
say() {
  echo "check-install [$(($(date +%s) - t0)) s]: $*"
}

fail() {
  echo "check-install [$(($(date +%s) - t0)) s]: FAIL: $*" >&2
  exit 1
}

[ -f "$build/build.ninja" ] || fail "$build is not a configured build directory (meson setup $build)"
for tool in pkg-config cc; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (scripts/install-deps.sh installs it)"
done

rm -rf "$stage"
say "meson install --destdir $stage"
meson install -C "$build" --destdir "$stage" --no-rebuild --quiet ||
  fail "meson install into $stage failed (is $build built? ninja -C $build)"

# the configured directories, from meson (absolute; shell-quoted assignments)
prefix='' bindir='' libdir='' includedir='' datadir='' mandir='' unit_dir=''
dirs=$(meson introspect "$build" --buildoptions | "$py" -c '
import json, shlex, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
p = o["prefix"]
for k in ("bindir", "libdir", "includedir", "datadir", "mandir"):
    v = o[k]
    print(k + "=" + shlex.quote(v if v.startswith("/") else p + "/" + v))
print("prefix=" + shlex.quote(p))
print("unit_dir=" + shlex.quote(o.get("systemd_unit_dir", "")))') ||
  fail "meson introspect $build --buildoptions failed"
eval "$dirs"

# 2a. everything meson installs is in the stage
missing=$(meson introspect "$build" --installed | "$py" -c '
import json, os, sys
stage = sys.argv[1]
for src, dst in sorted(json.load(sys.stdin).items()):
    if not os.path.lexists(stage + dst):
        print(dst)' "$stage")
[ -z "$missing" ] || fail "meson install left out: $missing"

# 2b. what users build on
need() {
  for f in "$@"; do
    [ -e "$stage$f" ] || fail "not installed: $f"
  done
}
need "$bindir/physd" "$bindir/physctl" "$bindir/physbench" \
  "$libdir/libphys.so" "$libdir/libphys.so.0" "$libdir/libphysclient.so" \
  "$libdir/libphysclient.so.0" "$includedir/phys/phys.h" "$includedir/phys/phys_types.h" \
  "$includedir/physclient.h" "$libdir/pkgconfig/phys.pc" "$libdir/pkgconfig/physclient.pc" \
  "$datadir/physd/physd.conf" "$datadir/physd/worlds/default.xml" \
  "$datadir/physd/web/index.html" "$mandir/man1/physd.1" "$mandir/man1/physctl.1"
site_init=$(find "$stage" -path '*/physd_client/__init__.py' | head -n 1)
[ -n "$site_init" ] || fail "the Python package physd_client is not installed"
pkg_dir=$(dirname "$site_init")
site=$(dirname "$pkg_dir")
[ -f "$pkg_dir/physd_pb2.py" ] ||
  fail "physd_pb2.py is not inside the installed package $pkg_dir (protoc missing at build?)"
if [ "$unit_dir" != no ]; then
  unit=$(find "$stage" -name physd.service | head -n 1)
  [ -n "$unit" ] || fail "physd.service is not installed (-Dsystemd_unit_dir=no leaves it out)"
  grep -q "^ExecStart=$bindir/physd --config $datadir/physd/physd.conf" "$unit" ||
    fail "$unit does not start $bindir/physd with $datadir/physd/physd.conf"
fi
say "installed files present (prefix $prefix, libdir $libdir)"

# 3. C programs against the staged headers, libraries and pkg-config files
say "C programs against the staged files"
work=$stage.work
rm -rf "$work"
mkdir -p "$work"
export PKG_CONFIG_PATH="$stage$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$stage"
for pc in phys physclient; do
  flags=$(pkg-config --cflags --libs "$pc") || fail "pkg-config --cflags --libs $pc failed"
  case $flags in
    *"$stage"*) ;;
    *) fail "pkg-config $pc does not point into the stage: $flags" ;;
  esac
done
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
cc -std=gnu17 -Wall -Wextra -Werror -o "$work/hello_phys" tests/install/hello_phys.c \
  $(pkg-config --cflags --libs phys) -Wl,-rpath,"$stage$libdir" ||
  fail "tests/install/hello_phys.c does not build with pkg-config phys"
# shellcheck disable=SC2046
cc -std=gnu17 -Wall -Wextra -Werror -o "$work/hello_client" tests/install/hello_client.c \
  $(pkg-config --cflags --libs physclient) -Wl,-rpath,"$stage$libdir" ||
  fail "tests/install/hello_client.c does not build with pkg-config physclient"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
for exe in hello_phys hello_client; do
  lib=$(ldd "$work/$exe" | awk '/libphys(client)?\.so/ { print $3 }')
  case $lib in
    "$stage"*) ;;
    *) fail "$exe loads its library from '$lib', not from the stage" ;;
  esac
done
OMP_WAIT_POLICY=passive "$work/hello_phys" "$stage$datadir/physd/worlds/default.xml" 100 ||
  fail "hello_phys (libphys from the stage) failed"

# 4. the staged daemon, its C and Python clients
say "the staged physd and its clients"
sock=$work/physd.sock
log=$work/physd.log
(cd "$work" && OMP_WAIT_POLICY=passive exec "$stage$bindir/physd" --socket "$sock" \
  > "$log" 2>&1) &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
i=0
while [ ! -S "$sock" ]; do
  i=$((i + 1))
  if [ "$i" -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
    cat "$log" >&2
    fail "the staged physd did not open $sock"
  fi
  sleep 0.1
done
grep -q "msg=\"worlds directory\" dir=$(realpath "$stage$datadir/physd/worlds")" "$log" || {
  cat "$log" >&2
  fail "the staged physd did not find its staged worlds folder"
}
world=$stage$datadir/physd/worlds/default.xml
"$work/hello_client" "$sock" "$world" 100 || { cat "$log" >&2; fail "hello_client failed"; }
env -u PHYSD_PB2_DIR PYTHONPATH="$site" "$py" tests/install/hello_client.py "$sock" "$world" \
  "$site" || { cat "$log" >&2; fail "hello_client.py (the staged Python package) failed"; }

# 5. pip: clients/python's pyproject.toml builds offline with Debian's setuptools and wheel
# (--no-build-isolation --no-index) into a folder of its own; a copy of the package is built,
# with physd.proto named by PHYSD_PROTO, so the source tree gets no build/ or egg-info
say "pip: clients/python offline"
if "$py" -m pip --version >/dev/null 2>&1; then
  cp -r clients/python "$work/pysrc"
  rm -rf "$work/pysrc/build" "$work/pysrc"/*.egg-info
  PHYSD_PROTO=$(pwd)/proto/physd.proto "$py" -m pip install --quiet --no-build-isolation \
    --no-index --no-deps --no-compile --disable-pip-version-check --root-user-action=ignore \
    --target "$work/pip" "$work/pysrc" ||
    fail "pip install of clients/python failed (python3-setuptools, python3-wheel, protoc?)"
  env -u PHYSD_PB2_DIR PYTHONPATH="$work/pip" "$py" tests/install/hello_client.py "$sock" \
    "$world" "$work/pip" || { cat "$log" >&2; fail "hello_client.py (pip's package) failed"; }
else
  fail "pip not found for $py (Debian: python3-pip)"
fi

kill -TERM "$pid"
wait "$pid" || fail "the staged physd did not exit 0 at SIGTERM"
trap - EXIT
say "PASS (stage $stage)"
