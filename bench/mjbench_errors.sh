#!/bin/sh
# mjbench_errors.sh - check mjbench's error exits: a missing file is exit 1 with a message naming
# the file, bad arguments are exit 2 with a usage line. Usage: mjbench_errors.sh PATH/TO/mjbench
set -u
mjbench=$1
missing=/nonexistent/mjbench-no-such-file.xml
fail=0

. "$(dirname "$0")/expect.sh"

expect 1 "cannot load $missing" "$mjbench" "$missing" --steps 10
expect 2 "usage: mjbench" "$mjbench" --steps 10
expect 2 "invalid --steps" "$mjbench" "$missing" --steps 0
expect 2 "unknown option" "$mjbench" "$missing" --steps 10 --threads 2
expect 2 "invalid --worlds" "$mjbench" "$missing" --steps 10 --worlds 0
# --worlds N: N copies stepped in turn, reported as env_steps_per_s
boxes="$(dirname "$0")/../configs/worlds/boxes20.xml"
expect 0 '"worlds": 3, "env_steps_per_s":' "$mjbench" "$boxes" --steps 5 --worlds 3 --json
exit $fail
