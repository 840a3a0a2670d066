#!/usr/bin/python3
"""StepAndObserve round trips of the Python client against a running physd, in lock-step mode.

Connects to the daemon's Unix socket (or --tcp HOST:PORT), switches it to lock-step, then times
--cycles calls of step_and_observe(1) one by one (time.perf_counter_ns around each call, so the
figure includes the client's own encoding and decoding) after --warmup untimed ones. Prints one
JSON object: p50, p99, p99.9 and max microseconds, and the mean. The C client's figure comes from
`physctl latency`; both together show what a controller in either language sees.

    build/server/physd --socket /tmp/p.sock --world configs/worlds/arm_gripper.xml --threads 2 &
    PYTHONPATH=clients/python PHYSD_PB2_DIR=build/clients/python bench/latency.py --socket /tmp/p.sock
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients",
                                "python"))
import physd_client as pc  # noqa: E402


def percentile(sorted_values, q):
    """Nearest-rank percentile of a sorted list."""
    rank = max(1, min(len(sorted_values), int(-(-q * len(sorted_values) // 1))))
    return sorted_values[rank - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", default=os.environ.get("PHYSD_SOCKET",
                                                       "/tmp/physd-%d.sock" % os.getuid()))
    ap.add_argument("--tcp", help="HOST:PORT instead of the Unix socket")
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=1000)
    args = ap.parse_args()
    if args.tcp:
        host, port = args.tcp.rsplit(":", 1)
        c = pc.Client.connect_tcp(host, int(port), name="latency.py")
    else:
        c = pc.Client.connect_unix(args.socket, name="latency.py")
    c.set_mode(pc.MODE_LOCKSTEP)
    for _ in range(args.warmup):
        c.step_and_observe(1)
    us = []
    for _ in range(args.cycles):
        t = time.perf_counter_ns()
        c.step_and_observe(1)
        us.append((time.perf_counter_ns() - t) / 1000.0)
    us.sort()
    print(json.dumps({"client": "python", "transport": "tcp" if args.tcp else "unix",
                      "cycles": args.cycles, "p50_us": round(percentile(us, 0.5), 2),
                      "p99_us": round(percentile(us, 0.99), 2),
                      "p999_us": round(percentile(us, 0.999), 2), "max_us": round(us[-1], 2),
                      "mean_us": round(sum(us) / len(us), 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
