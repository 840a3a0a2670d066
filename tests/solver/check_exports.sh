#!/bin/sh
# check_exports.sh - libphys exports only its namespace: every global symbol the archive defines
# starts with phys_ (public API, declared in include/phys/) or phys__ (internal, shared between
# its source files), so a program can link libphys beside libmujoco or any other library.
# Each public phys_ symbol (one underscore) must be declared in a public header.
#   usage: check_exports.sh LIBPHYS.a INCLUDE_DIR
set -eu
lib=$1
inc=$2
if ! command -v nm >/dev/null 2>&1; then
  echo "check_exports: nm not found" >&2
  exit 77
fi
syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $2 ~ /[TDBRC]/ { print $3 }' | sort -u)
bad=0
for s in $syms; do
  case $s in
    # AddressSanitizer's one-definition-rule marker of a global variable: judged by the variable
    __odr_asan.*) s=${s#__odr_asan.} ;;
  esac
  case $s in
    phys__*) ;;
    phys_*)
      if ! grep -qw "$s" "$inc"/phys/*.h; then
        echo "check_exports: $s is exported but not declared in a public header" >&2
        bad=$((bad + 1))
      fi ;;
    *)
      echo "check_exports: $s is outside the phys_ namespace" >&2
      bad=$((bad + 1)) ;;
  esac
done
n=$(printf '%s\n' "$syms" | grep -c .)
echo "check_exports: $n global symbols, $bad outside the public API or the phys__ namespace"
[ "$bad" -eq 0 ]
