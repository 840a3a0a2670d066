#!/usr/bin/python3
"""subscribers.py - does streaming to many subscribers slow the simulation down?

Starts physd in max-speed mode on a world, measures its step rate from Stats over a window with
no subscribers, then again with N clients each subscribed to every body at a rate (default 50
clients at 100 Hz), and prints one JSON object with both rates, the slowdown in percent, and the
frames sent and dropped. The daemon, the subscribers and this script share the machine, so run it
on an idle machine and quote the median of a few runs (--repeat).

--raw: the subscribers are bare sockets in one select() loop that read and discard the frames
(no decoding, no thread per client), so what remains of the slowdown is the daemon's own cost
(and the kernel's). Each run also reports the CPU seconds per second of the daemon's threads
(the simulation thread is the busiest, the loop thread second) and of this script's process
(the subscribers) during the loaded window, and the steps per CPU second of the simulation
thread alone and loaded (sim_cpu_slowdown_percent): on a shared machine the wall-clock rates
also move with whatever else runs, this one only with the daemon's own per-step cost.

  bench/subscribers.py [--physd build/server/physd] [--world configs/worlds/boxes20.xml]
                       [--clients 50] [--hz 100] [--seconds 3] [--repeat 3] [--threads 1]
"""
import argparse
import json
import os
import selectors
import socket
import statistics
import struct
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


def thread_cpu(pid):
    """CPU seconds (user + system) of each thread of a process, by thread id."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return out


def self_cpu():
    t = os.times()
    return t.user + t.system


def start_physd(physd, sock, extra, stderr=subprocess.DEVNULL, wrapper=()):
    """Start physd on Unix socket `sock` with the extra arguments, under `wrapper` (a command
    that execs it, e.g. ["chrt", "-f", "10"], so the pid stays physd's); returns the Popen once
    the socket exists (plus 0.2 s for the world to load). Raises RuntimeError if it exits
    first. Also used by soak.py."""
    proc = subprocess.Popen(list(wrapper) + [physd, "--socket", sock] + list(extra),
                            stdout=subprocess.DEVNULL, stderr=stderr)
    for _ in range(500):
        if os.path.exists(sock) or proc.poll() is not None:
            break
        time.sleep(0.01)
    time.sleep(0.2)
    if proc.poll() is not None:
        raise RuntimeError("physd exited with status %d before it listened" % proc.returncode)
    return proc


class RawSubscribers:
    """N bare connections subscribed to every body; frames are read and thrown away (soak.py
    uses one that it never pumps: a subscriber that never reads)."""

    def __init__(self, pb, sock_path, n, period_ns):
        self.sel = selectors.DefaultSelector()
        self.socks = []
        self.bytes = 0
        for i in range(n):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
            hello = pb.Envelope(req_id=1)
            hello.hello.major, hello.hello.minor = 1, 1
            hello.hello.client_name = "raw%d" % i
            sub = pb.Envelope(req_id=2)
            sub.subscribe.period_ns = period_ns
            sub.subscribe.selector.all_bodies = True
            data = b"PHYS" + struct.pack("<HH", 1, 1)
            for env in (hello, sub):
                b = env.SerializeToString()
                data += struct.pack("<I", len(b)) + b
            s.sendall(data)
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ)
            self.socks.append(s)

    def pump(self, seconds):
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            for key, _ in self.sel.select(left):
                try:
                    got = key.fileobj.recv(1 << 16)
                except BlockingIOError:
                    continue
                self.bytes += len(got)

    def close(self):
        for s in self.socks:
            self.sel.unregister(s)
            s.close()


def one_run(args, pc):
    with tempfile.TemporaryDirectory(prefix="physd-subs-") as tmp:
        sock = os.path.join(tmp, "physd.sock")
        proc = start_physd(args.physd, sock, ["--world", args.world, "--mode", "max",
                                              "--threads", str(args.threads),
                                              "--max-clients", str(args.clients + 8)])
        try:
            ctl = pc.Client.connect_unix(sock, name="subscribers-bench")
            a0 = thread_cpu(proc.pid)
            s_a0 = ctl.get_stats()
            base, s_a1 = step_rate(ctl, args.seconds)
            a1 = thread_cpu(proc.pid)
            # the simulation thread is the one that used the most CPU while stepping alone
            sim_tid = max(a1, key=lambda k: a1[k] - a0.get(k, 0.0))
            alone_per_cpu = (s_a1.steps - s_a0.steps) / max(a1[sim_tid] - a0.get(sim_tid, 0.0),
                                                             1e-9)
            subs = []
            raw = None
            if args.raw:
                raw = RawSubscribers(ctl.pb, sock, args.clients, int(1e9 / args.hz))
                raw.pump(0.5)
            else:
                for i in range(args.clients):
                    c = pc.Client.connect_unix(sock, name="sub%d" % i)
                    c.subscribe(lambda frame: None, period_ns=int(1e9 / args.hz))
                    subs.append(c)
                time.sleep(0.5)
            cpu0, me0, t0 = thread_cpu(proc.pid), self_cpu(), time.monotonic()
            s0 = ctl.get_stats()
            if raw:
                raw.pump(args.seconds)
            else:
                time.sleep(args.seconds)
            s1 = ctl.get_stats()
            cpu1, me1, t1 = thread_cpu(proc.pid), self_cpu(), time.monotonic()
            loaded, stats = (s1.steps - s0.steps) / (t1 - t0), s1
            loaded_per_cpu = (s1.steps - s0.steps) / max(cpu1[sim_tid] - cpu0.get(sim_tid, 0.0),
                                                        1e-9)
            daemon_threads = sorted(((cpu1[k] - cpu0.get(k, 0.0)) / (t1 - t0) for k in cpu1),
                                    reverse=True)
            if raw:
                raw.close()
            for c in subs:
                c.close()
            ctl.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return {"steps_per_s_alone": base, "steps_per_s_with_subscribers": loaded,
            "slowdown_percent": 100.0 * (base - loaded) / base,
            "stream_frames_sent": stats.stream_frames_sent,
            "stream_frames_dropped": stats.stream_frames_dropped,
            "daemon_thread_cpu": [round(x, 3) for x in daemon_threads if x > 0.001],
            # steps per CPU second of the simulation thread: what the subscribers cost it,
            # whatever share of the cores the other processes took
            "steps_per_sim_cpu_s_alone": alone_per_cpu,
            "steps_per_sim_cpu_s_with_subscribers": loaded_per_cpu,
            "sim_cpu_slowdown_percent": 100.0 * (alone_per_cpu - loaded_per_cpu) / alone_per_cpu,
            "subscribers_cpu": round((me1 - me0) / (t1 - t0), 3)}


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
    ap.add_argument("--raw", action="store_true",
                    help="bare socket subscribers that discard the bytes (the daemon's own cost)")
    args = ap.parse_args()
    os.environ.setdefault("PHYSD_PB2_DIR", args.pb2_dir)
    sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
    import physd_client as pc  # noqa: E402  (after the path is set)
    runs = []
    for r in range(args.repeat):
        log("run %d/%d: %d subscribers at %g Hz" % (r + 1, args.repeat, args.clients, args.hz))
        runs.append(one_run(args, pc))
    out = {"world": os.path.relpath(args.world, ROOT), "clients": args.clients, "hz": args.hz,
           "raw": args.raw,
           "seconds": args.seconds, "repeat": args.repeat,
           "steps_per_s_alone_median": statistics.median(r["steps_per_s_alone"] for r in runs),
           "steps_per_s_with_subscribers_median":
               statistics.median(r["steps_per_s_with_subscribers"] for r in runs),
           "slowdown_percent_median": statistics.median(r["slowdown_percent"] for r in runs),
           "sim_cpu_slowdown_percent_median":
               statistics.median(r["sim_cpu_slowdown_percent"] for r in runs),
           "runs": runs}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
