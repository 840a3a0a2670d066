#!/bin/sh
# viewer_cost_smoke.sh - viewer_cost end to end: a short run (2 viewers, 200 steps, 1 round)
# prints one JSON object with both sides measured and frames read; bad arguments exit 2 with a
# message. Usage: viewer_cost_smoke.sh PATH/TO/viewer_cost PATH/TO/physd
set -u
vc=$1 physd=$2
fail=0

. "$(dirname "$0")/expect.sh"

out=$("$vc" --physd "$physd" --viewers 2 --steps 200 --rounds 1 2>/dev/null)
rc=$?
if [ "$rc" -ne 0 ] || ! printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["viewers"] == 2 and o["steps"] == 200 and o["rounds"] == 1, o
assert len(o["without_s"]) == 1 and len(o["with_s"]) == 1, o
assert o["median_without_s"] > 0 and o["median_with_s"] > 0 and o["ratio"] > 0, o
assert o["frames_read"] > 0, o
'; then
  echo "FAIL: viewer_cost short run -> exit $rc, output: $out"
  fail=1
else
  echo "ok: viewer_cost short run: $out"
fi
expect 2 "needs an integer in 1..16" "$vc" --viewers 0
expect 2 "needs an integer in 0..1000" "$vc" --max-fps 2000
expect 2 "usage: viewer_cost" "$vc" --bogus
expect 2 "no physd at" "$vc" --physd /nonexistent/physd
exit $fail
