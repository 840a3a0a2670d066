#!/usr/bin/python3
"""subscribers.py - does streaming to many subscribers slow the simulation down?

Starts physd in max-speed mode on a world, measures its step rate from Stats over a window with
no subscribers, then again with N clients each subscribed to every body at a rate (default 50
clients at 100 Hz), and prints one JSON object with both rates, the slowdown in percent, and the
frames sent and dropped. The daemon, the subscribers and this script share the machine, so run it
on an idle machine and quote the median of a few runs (--repeat).

  bench/subscribers.py [--physd build/server/physd] [--world configs/worlds/boxes20.xml]
                       [--clients 50] [--hz 100] [--seconds 3] [--repeat 3] [--threads 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def step_rate(client, seconds):
    """Steps per second over a window, from the daemon's own step counter."""
    s0 = client.get_stats()
    t0 = time.monotonic()
    time.sleep(seconds)
    s1 = client.get_stats()
    t1 = time.monotonic()
    return (s1.steps - s0.steps) / (t1 - t0), s1


def one_run(args, pc):
    with tempfile.TemporaryDirectory(prefix="physd-subs-") as tmp:
        sock = os.path.join(tmp, "physd.sock")
        proc = subprocess.Popen([args.physd, "--socket", sock, "--world", args.world,
                                 "--mode", "max", "--threads", str(args.threads),
                                 "--max-clients", str(args.clients + 8)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(500):
                if os.path.exists(sock):
                    break
                time.sleep(0.01)
            time.sleep(0.2)
            ctl = pc.Client.connect_unix(sock, name="subscribers-bench")
            base, _ = step_rate(ctl, args.seconds)
            subs = []
            for i in range(args.clients):
                c = pc.Client.connect_unix(sock, name="sub%d" % i)
                c.subscribe(lambda frame: None, period_ns=int(1e9 / args.hz))
                subs.append(c)
            time.sleep(0.5)
            loaded, stats = step_rate(ctl, args.seconds)
            for c in subs:
                c.close()
            ctl.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return {"steps_per_s_alone": base, "steps_per_s_with_subscribers": loaded,
            "slowdown_percent": 100.0 * (base - loaded) / base,
            "stream_frames_sent": stats.stream_frames_sent,
            "stream_frames_dropped": stats.stream_frames_dropped}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--physd", default=os.path.join(ROOT, "build", "server", "physd"))
    ap.add_argument("--world", default=os.path.join(ROOT, "configs", "worlds", "boxes20.xml"))
    ap.add_argument("--pb2-dir", default=os.path.join(ROOT, "build", "clients", "python"))
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--hz", type=float, default=100.0)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    os.environ.setdefault("PHYSD_PB2_DIR", args.pb2_dir)
    sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
    import physd_client as pc  # noqa: E402  (after the path is set)
    runs = []
    for r in range(args.repeat):
        log("run %d/%d: %d subscribers at %g Hz" % (r + 1, args.repeat, args.clients, args.hz))
        runs.append(one_run(args, pc))
    out = {"world": os.path.relpath(args.world, ROOT), "clients": args.clients, "hz": args.hz,
           "seconds": args.seconds, "repeat": args.repeat,
           "steps_per_s_alone_median": statistics.median(r["steps_per_s_alone"] for r in runs),
           "steps_per_s_with_subscribers_median":
               statistics.median(r["steps_per_s_with_subscribers"] for r in runs),
           "slowdown_percent_median": statistics.median(r["slowdown_percent"] for r in runs),
           "runs": runs}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
