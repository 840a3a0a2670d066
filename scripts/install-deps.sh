#!/bin/sh
# install-deps.sh - install the Debian packages that physd's build, tests and benchmark need.
#
# Idempotent: when every package is already installed (dpkg -s), apt is not touched, so repeated
# runs take a fraction of a second. Runs as root, or through sudo when that exists.
set -eu

# build: compiler, meson, ninja, pkg-config; engine: LAPACKE/OpenBLAS, libxml2 (MJCF loader);
# collision of convex meshes: libccd (GJK/EPA), qhull (convex hulls);
# tests: CUnit, valgrind; daemon: libuv, protobuf-c; viewer: libwebsockets (with its libuv
# backend) and jansson (the viewers' JSON requests), libjs-three (three.js for the browser page,
# served by physd), python3-websockets (the viewer's conformance test) and chromium (the page's
# headless screenshot test; about 80 s and 110 packages to install on a bare Debian 12); bench: MuJoCo as the peer (libmujoco-dev
# for bench/mjbench, which times it on physbench's phase; mujoco-testspeed and the models);
# CANAL: CHOLMOD (libsuitesparse-dev) for the sparse Hessian of large islands;
# plots: python3-matplotlib (bench/plot_singlestep.py and its test); the Python client's
# vector env (physd_client.vec_env, protocol 1.9's batches) and its test: python3-numpy;
# fuzzing: clang, its runtimes (libclang-rt-14-dev: libFuzzer, ASan, UBSan; only recommended by
# clang, and apt runs without recommends) and libomp-dev (OpenMP under clang): scripts/fuzz.sh;
# ThreadSanitizer: libomp-14-dev, whose libarcher.so tells TSan about OpenMP (scripts/tsan.sh);
# install check (scripts/check-install.sh): pkg-config (above), and python3-pip,
# python3-setuptools and python3-wheel, with which pip builds clients/python offline;
# orchestration (docs/deploy.md): prometheus (its server scrapes /metrics in
# server_http_prometheus) and python3-distributed (Dask: the worker plugin and its test
# `dask` run a real scheduler and workers) and python3-yaml (the test deploy_recipes reads
# configs/kubernetes/physd.yaml).
PACKAGES="build-essential meson ninja-build pkg-config libcunit1-dev liblapacke-dev
libopenblas-dev libxml2-dev libuv1-dev libwebsockets-dev libjansson-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler python3-protobuf
libjs-three python3-websockets chromium
libmujoco-samples libmujoco-dev valgrind libccd-dev libqhull-dev libsuitesparse-dev python3-matplotlib python3-numpy
clang libclang-rt-14-dev libomp-dev libomp-14-dev
python3-pip python3-setuptools python3-wheel
prometheus python3-distributed python3-yaml"

# Print the packages that dpkg does not report as installed.
missing_packages() {
  for p in $PACKAGES; do
    if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
      printf '%s\n' "$p"
    fi
  done
}

missing=$(missing_packages | tr '\n' ' ')
if [ -z "$missing" ]; then
  echo "install-deps: all packages already installed"
  exit 0
fi

# root runs apt directly; anyone else needs sudo
if [ "$(id -u)" -eq 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1; then
  as_root="sudo"
else
  echo "install-deps: missing packages: $missing" >&2
  echo "install-deps: not root and no sudo; install them as root" >&2
  exit 1
fi

echo "install-deps: installing: $missing"
export DEBIAN_FRONTEND=noninteractive
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086  # word splitting of the package list is intended
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
