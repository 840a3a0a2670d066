#!/bin/sh
# check_doc_options.sh - docs/engine.md's copy of the solver option table is what
# `physbench --list-solvers` prints from libphys's table (solvers/solver_options.c), so the
# documented names, defaults and ranges cannot drift from the library's.
# Usage: check_doc_options.sh PATH/TO/physbench PATH/TO/docs/engine.md
set -eu
physbench=$1
doc=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/docopts-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$physbench" --list-solvers > "$tmp/table"
sed -n '/^<!-- begin physbench --list-solvers -->$/,/^<!-- end physbench --list-solvers -->$/p' \
  "$doc" | sed '1,2d;$d' | sed '$d' > "$tmp/doc"
if ! [ -s "$tmp/doc" ]; then
  echo "check_doc_options: no '<!-- begin physbench --list-solvers -->' block in $doc"
  exit 1
fi
if ! diff -u "$tmp/doc" "$tmp/table"; then
  echo "check_doc_options: $doc differs from physbench --list-solvers (paste its output there)"
  exit 1
fi
echo "check_doc_options: $(wc -l < "$tmp/table") lines agree"
