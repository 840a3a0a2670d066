#!/usr/bin/python3
"""rt_logger.py - run physd in real time and log the streamed body states.

Switches the daemon to real-time mode (--rtf, default 1.0), subscribes to state frames at
--hz and writes one line per body per frame: CSV (default; a header line first) or JSON lines
(--format json). The frames arrive on the client's reader thread; this one only waits.
Stops after --duration seconds or --count frames, then unsubscribes and, unless --keep-running,
puts the daemon back in lock-step mode.

    PHYSD_PB2_DIR=build/clients/python PYTHONPATH=clients/python \\
        /usr/bin/python3 clients/python/examples/rt_logger.py --socket /tmp/physd.sock --duration 2
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import physd_client as pc  # noqa: E402

FIELDS = ("step", "sim_time_s", "body", "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz",
          "dropped")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", help="physd Unix socket (default: the daemon's default)")
    ap.add_argument("--tcp", help="HOST:PORT instead of the Unix socket")
    ap.add_argument("--hz", type=float, default=50.0, help="frames per second (default 50)")
    ap.add_argument("--rtf", type=float, default=1.0, help="real-time factor (default 1)")
    ap.add_argument("--duration", type=float, default=5.0, help="seconds (default 5)")
    ap.add_argument("--count", type=int, default=0, help="stop after this many frames")
    ap.add_argument("--format", choices=("csv", "json"), default="csv")
    ap.add_argument("--out", help="file to write (default stdout)")
    ap.add_argument("--keep-running", action="store_true",
                    help="leave the daemon in real-time mode at the end")
    args = ap.parse_args()

    out = open(args.out, "w") if args.out else sys.stdout
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        c = pc.Client.connect_tcp(host or "127.0.0.1", int(port), name="rt_logger")
    else:
        c = pc.Client.connect_unix(args.socket, name="rt_logger")
    frames = [0]
    done = threading.Event()

    def on_frame(f):   # on the reader thread: write and count, nothing blocking
        if done.is_set():
            return
        t = f.sim_time_ns / 1e9
        for b in f.bodies:
            row = (f.step, t, b.id, b.pos.x, b.pos.y, b.pos.z, b.quat.w, b.quat.x, b.quat.y,
                   b.quat.z, b.linvel.x, b.linvel.y, b.linvel.z, f.dropped)
            try:
                if args.format == "json":
                    out.write(json.dumps(dict(zip(FIELDS, row))) + "\n")
                else:
                    out.write(",".join(repr(v) if isinstance(v, float) else str(v) for v in row)
                              + "\n")
            except BrokenPipeError:   # e.g. piped into head: stop quietly
                done.set()
                return
        frames[0] += 1
        if args.count and frames[0] >= args.count:
            done.set()

    try:
        if args.format == "csv":
            out.write(",".join(FIELDS) + "\n")
        period = int(1e9 / args.hz)
        period = max(period, c.welcome.limits.min_stream_period_ns)
        sid = c.subscribe(on_frame, period_ns=period)
        c.set_mode(pc.MODE_REALTIME, real_time_factor=args.rtf)
        c.resume()
        done.wait(args.duration)
        c.unsubscribe(sid)
        stats = c.get_stats()
        if not args.keep_running:
            c.set_mode(pc.MODE_LOCKSTEP)
    finally:
        c.close()
        try:
            out.flush()
        except BrokenPipeError:
            sys.stdout = None
        if args.out:
            out.close()
    print("rt_logger: %d frames, measured real-time factor %.3f, %d overruns, %d frames dropped"
          % (frames[0], stats.real_time_factor_measured, stats.overruns,
             stats.stream_frames_dropped), file=sys.stderr)
    return 0 if frames[0] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
