#!/usr/bin/python3
"""soak.py - hours of mixed traffic against one physd: does it leak, fall behind or lose a reply?

A soak benchmark, not a test (issue 11). It starts physd on a world (default
configs/worlds/arm_boxes20.xml, timestep 1 ms) and drives it with 8 clients at once for
--duration seconds:

  controller   joint commands tied to state frames (below)
  barrier      a barrier participant; between its barrier phases it is the monitor (GetStats
               once a second)
  sub_all_1k   every step (1 kHz), every body
  sub_contacts every 10 ms, every body and the contacts
  sub_joints   every 20 ms, every joint and the actuator forces
  sub_stats    every 100 ms, the clock and the engine's StepStats
  sub_boxes    every 5 ms, three bodies
  non_reader   a bare socket subscribed to every step and every body that never reads (its
               socket buffers fill; physd must drop its frames latest-wins, not block, not
               grow); it reads everything once, at the end, to count what it was sent

The brief's "real time at 1 kHz" and "a lock-step controller" (and "a barrier participant")
cannot hold at the same moment for one world: MODE_REALTIME steps on the daemon's clock, only
MODE_LOCKSTEP steps on a client's StepAndObserve, and only MODE_BARRIER answers a participant's
Step (docs/protocol.md, Time). So the run is a sequence of cycles, the controller switching
modes with SetMode:

  1. real time at 1 kHz for --realtime-s seconds (default 50, most of the run): the controller
     is subscribed to every step (clock only) and answers each frame it gets with a PD
     SetJointCommand for the arm's joints whose seq is the frame's step, so the command stream is
     tied to the state stream at 1 kHz (the lag frame.step - frame.last_cmd_seq is measured);
     the staleness watchdog (20 steps) watches it. Drift is measured here: GetState's
     sim_time_ns and wall_mono_ns at the start and end of each real-time phase.
  2. lock-step for --lockstep-steps steps (default 2000): the controller calls
     StepAndObserve{n=1, command} back to back.
  3. barrier for --barrier-steps rounds (default 2000): controller and participant
     JoinBarrier, each sends Step{1} per round (the controller a SetJointCommand before each),
     both LeaveBarrier.

The run ends in a real-time phase. Stream subscribers receive frames in every mode. Measured:
physd's RSS (/proc/PID/status VmRSS) every second and its least-squares slope in KB/min after
--warmup seconds; Stats (overruns, stale_commands, frames sent and dropped, real-time factor);
drift of sim time against wall time over the real-time phases; for every client the requests
sent, replies received, error replies by code and lost replies (a request with no answer: a
timeout or a connection closed while waiting); per subscriber the frames received, the frames
physd reports dropped for it (StateFrame.dropped), any frames neither received nor reported
dropped (one frame is due per period crossed) and the frames that carry a later step than the
multiple they are for (off_grid: the loop thread saw the next snapshot first, by design); the
non-reader's frames and drops; physd's warn/error log lines by message; CPU of the
daemon and of this script. Prints one JSON object on stdout, progress on stderr.

Exit status 1 (with "failures" listing why) on a lost reply, a client whose connection broke,
an RSS slope above --rss-slope-max KB/min, frames a subscriber neither got nor was told were
dropped, or physd dying or exiting non-zero on SIGTERM. CI runs the two-minute version:

  bench/soak.py --duration 120 --physd build-ci/server/physd

--sched-fifo PRIO runs physd under `chrt -f PRIO`: on a loaded machine its overruns and drift
then measure the daemon, not the other work that takes the cores from it.
"""
import argparse
import collections
import json
import math
import os
import re
import select
import socket
import struct
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from subscribers import RawSubscribers, log, self_cpu, start_physd, thread_cpu  # noqa: E402

pc = None  # physd_client, imported in main() once PHYSD_PB2_DIR is set


def rss_kb(pid):
    """VmRSS of a process in kB (None once it is gone)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def loadavg1():
    """The machine's 1-minute load average (what else competed for the cores)."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def slope_per_min(samples):
    """Least-squares slope of [(t seconds, value)] in value per minute (0 below 2 samples)."""
    n = len(samples)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in samples) / n
    mv = sum(v for _, v in samples) / n
    den = sum((t - mt) ** 2 for t, _ in samples)
    if den == 0:
        return 0.0
    return 60.0 * sum((t - mt) * (v - mv) for t, v in samples) / den


def counter_percentile(counts, q):
    """Nearest-rank percentile of a Counter {value: how many times} (None when empty)."""
    total = sum(counts.values())
    if not total:
        return None
    rank = max(1, math.ceil(q * total))
    for value in sorted(counts):
        rank -= counts[value]
        if rank <= 0:
            return value
    return max(counts)


class Tally:
    """Requests, replies, error replies by code and lost replies of one client."""

    def __init__(self, name):
        self.name = name
        self.requests = self.replies = self.lost = 0
        self.errors = collections.Counter()
        self.first_failure = None
        self.lock = threading.Lock()

    def call(self, fn, *args, **kw):
        """fn(*args, **kw) counted; returns its result (True for a request whose method returns
        nothing, an Ack), or None when it failed."""
        with self.lock:
            self.requests += 1
        try:
            r = fn(*args, **kw)
        except pc.ServerError as e:
            with self.lock:
                self.replies += 1
                self.errors[e.code_name] += 1
                self.first_failure = self.first_failure or str(e)
            return None
        except (pc.Timeout, pc.ConnectionClosed) as e:
            with self.lock:
                self.lost += 1
                self.first_failure = self.first_failure or "%s: %s" % (type(e).__name__, e)
            return None
        with self.lock:
            self.replies += 1
        return True if r is None else r

    def report(self):
        return {"requests": self.requests, "replies": self.replies, "lost": self.lost,
                "errors": dict(self.errors), "first_failure": self.first_failure}


class FrameCount:
    """A subscription's frames: count, drops physd reports, frames neither got nor reported."""

    def __init__(self, period_ns, timestep_ns):
        self.period_steps = max(1, period_ns // timestep_ns) if period_ns else 1
        self.n = 0
        self.first = self.last = None   # (step, dropped)
        self.backwards = 0
        self.off_grid = []       # steps of frames off the period's multiples (first 10)
        self.n_off_grid = 0
        self.overrun_flags = 0
        self.stale_flags = 0
        self.latest = None
        self.cond = threading.Condition()

    def __call__(self, frame):
        with self.cond:
            if self.last is not None and frame.step <= self.last[0]:
                self.backwards += 1
            if frame.step % self.period_steps:
                self.n_off_grid += 1
                if len(self.off_grid) < 10:
                    self.off_grid.append(frame.step)
            if self.first is None:
                self.first = (frame.step, frame.dropped)
            self.last = (frame.step, frame.dropped)
            self.n += 1
            self.overrun_flags += frame.flags.overrun
            self.stale_flags += frame.flags.stale_command
            self.latest = frame
            self.cond.notify_all()

    def wait_newer(self, step, timeout):
        """The newest frame with a step above `step`, or None after timeout seconds."""
        with self.cond:
            if not (self.latest is not None and self.latest.step > step):
                self.cond.wait(timeout)
            f = self.latest
            return f if f is not None and f.step > step else None

    def report(self):
        with self.cond:
            out = {"frames": self.n, "dropped": 0, "unaccounted": 0, "backwards": self.backwards,
                   "off_grid": self.n_off_grid, "off_grid_steps": self.off_grid}
            if self.first is None:
                return out
            dropped = self.last[1] - self.first[1]
            # frames published from the first received to the last received, both included: one
            # per period crossed (a frame may carry a later step than the multiple it is for,
            # when the loop thread saw the next snapshot first: counted in off_grid)
            p = self.period_steps
            published = self.last[0] // p - self.first[0] // p + 1
            out.update(dropped=self.last[1], unaccounted=published - self.n - dropped,
                       first_step=self.first[0], last_step=self.last[0])
            return out


class Stop:
    """Shared end of the run: set on the deadline, on SIGINT or when a client thread fails."""

    def __init__(self, deadline):
        self.deadline = deadline
        self.event = threading.Event()

    def left(self):
        return self.deadline - time.monotonic()

    def over(self):
        return self.event.is_set() or self.left() <= 0


class Controller(threading.Thread):
    """Runs the cycles: real time (commands tied to frames), lock-step, barrier (with the
    participant). Owns the mode switches."""

    def __init__(self, client, participant, args, stop, timestep_ns):
        super().__init__(name="controller", daemon=True)
        self.c = client
        self.p = participant
        self.args = args
        self.stop = stop
        self.tally = Tally("controller")
        self.frames = FrameCount(0, timestep_ns)
        self.joints = [int(j) for j in args.joints.split(",")]
        self.lag = collections.Counter()     # frame.step - frame.last_cmd_seq, in real time
        self.commands = 0
        self.phases = collections.Counter()
        self.rt_wall_ns = self.rt_sim_ns = 0
        self.drift_ms = []                   # (sim - wall) of each real-time phase, ms
        self.error = None

    def command(self, step, sim_time_ns):
        t = sim_time_ns * 1e-9
        n = len(self.joints)
        q = [0.1 * math.sin(2 * math.pi * t / 8.0 + i) for i in range(n)]
        return dict(joint_ids=self.joints, mode=pc.CMD_PD, q=q, qd=[0.0] * n,
                    kp=[50.0] * n, kd=[5.0] * n, seq=step)

    def clock(self):
        f = self.tally.call(self.c.get_state, bodies=[])
        return None if f is None else (f.sim_time_ns, f.wall_mono_ns)

    def realtime_phase(self, end):
        self.phases["realtime"] += 1
        if self.tally.call(self.c.set_mode, pc.MODE_REALTIME, real_time_factor=1.0) is None:
            self.error = "SetMode(realtime) failed: %s" % self.tally.first_failure
            self.stop.event.set()
            return
        c0 = self.clock()
        last = 0
        while not self.stop.event.is_set() and time.monotonic() < end:
            f = self.frames.wait_newer(last, 0.1)
            if f is None:
                continue
            last = f.step
            if f.last_cmd_seq:
                self.lag[min(f.step - f.last_cmd_seq, 1000)] += 1
            self.tally.call(self.c.set_joint_command, **self.command(f.step, f.sim_time_ns))
            self.commands += 1
        c1 = self.clock()
        if c0 and c1:
            sim, wall = c1[0] - c0[0], c1[1] - c0[1]
            self.rt_sim_ns += sim
            self.rt_wall_ns += wall
            self.drift_ms.append((sim - wall) / 1e6)

    def lockstep_phase(self):
        self.phases["lockstep"] += 1
        self.tally.call(self.c.set_mode, pc.MODE_LOCKSTEP)
        f = self.tally.call(self.c.get_state, bodies=[])
        step, t = (f.step, f.sim_time_ns) if f else (0, 0)
        for _ in range(self.args.lockstep_steps):
            if self.stop.event.is_set():
                return
            f = self.tally.call(self.c.step_and_observe, 1, command=self.command(step, t),
                                bodies=[])
            self.commands += 1
            if f is not None:
                step, t = f.step, f.sim_time_ns

    def barrier_phase(self):
        self.phases["barrier"] += 1
        n = self.args.barrier_steps
        self.tally.call(self.c.set_mode, pc.MODE_BARRIER, barrier_deadline_ns=int(5e9),
                        deadline_policy=pc.DEADLINE_WAIT)
        self.tally.call(self.c.join_barrier, 0)
        if not self.p.start_barrier(n):
            self.tally.call(self.c.leave_barrier)
            return
        for i in range(n):
            f = self.frames.latest
            step, t = (f.step, f.sim_time_ns) if f else (0, 0)
            self.tally.call(self.c.set_joint_command, **self.command(step, t))
            self.commands += 1
            self.tally.call(self.c.step, 1)
        self.p.wait_barrier_done()
        self.tally.call(self.c.leave_barrier)

    def run(self):
        try:
            a = self.args
            self.tally.call(self.c.subscribe, self.frames, period_ns=0, bodies=[])
            while not self.stop.over():
                end = min(self.stop.deadline, time.monotonic() + a.realtime_s)
                self.realtime_phase(end)
                # the run ends in real time: no other phase unless a real-time one follows
                if self.stop.left() < a.realtime_s / 2 + 5 or self.stop.event.is_set():
                    continue
                if a.lockstep_steps:
                    self.lockstep_phase()
                if a.barrier_steps:
                    self.barrier_phase()
        except Exception as e:  # a bug here must end the run, not hang it
            self.error = repr(e)
            self.stop.event.set()

    def report(self):
        out = self.tally.report()
        out.update(self.frames.report())
        out.update(commands=self.commands, phases=dict(self.phases),
                   command_lag_steps={"p50": counter_percentile(self.lag, 0.5),
                                      "p99": counter_percentile(self.lag, 0.99),
                                      "p999": counter_percentile(self.lag, 0.999),
                                      "max": max(self.lag) if self.lag else None},
                   thread_error=self.error)
        return out


class Participant(threading.Thread):
    """The barrier participant; between barrier phases it polls Stats once a second."""

    def __init__(self, client, stop):
        super().__init__(name="participant", daemon=True)
        self.c = client
        self.stop = stop
        self.tally = Tally("barrier")
        self.stats = []          # (monotonic time, Stats)
        self.rounds = 0
        self.cond = threading.Condition()
        self.todo = 0            # barrier steps asked for by the controller
        self.joined = False
        self.done = True
        self.error = None

    def start_barrier(self, n):
        """Called by the controller: join and take n steps; True once joined."""
        with self.cond:
            self.todo, self.joined, self.done = n, False, False
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.joined or self.done, timeout=20)
            return self.joined

    def wait_barrier_done(self):
        with self.cond:
            self.cond.wait_for(lambda: self.done, timeout=60)

    def poll_stats(self):
        s = self.tally.call(self.c.get_stats)
        if s is not None:
            self.stats.append((time.monotonic(), s))

    def run(self):
        try:
            next_poll = time.monotonic()
            while not self.stop.over():
                with self.cond:
                    self.cond.wait_for(lambda: self.todo, timeout=max(0.0, next_poll -
                                                                       time.monotonic()))
                    n, self.todo = self.todo, 0
                if n:
                    ok = self.tally.call(self.c.join_barrier, 1) is not None
                    with self.cond:
                        self.joined = ok
                        self.done = not ok
                        self.cond.notify_all()
                    if ok:
                        for _ in range(n):
                            self.tally.call(self.c.step, 1)
                            self.rounds += 1
                        self.tally.call(self.c.leave_barrier)
                    with self.cond:
                        self.done = True
                        self.cond.notify_all()
                if time.monotonic() >= next_poll:
                    self.poll_stats()
                    next_poll += 1.0
            self.poll_stats()
        except Exception as e:
            self.error = repr(e)
            self.stop.event.set()

    def report(self):
        out = self.tally.report()
        out.update(barrier_rounds=self.rounds, stats_polls=len(self.stats),
                   thread_error=self.error)
        return out


def drain_raw(pb, sock, seconds):
    """Read what a never-reading raw subscriber was sent: (replies by kind, frame count,
    first (step, dropped), last (step, dropped))."""
    buf = bytearray()
    end = time.monotonic() + seconds
    sock.setblocking(False)
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([sock], [], [], left)
        if r:
            try:
                got = sock.recv(1 << 20)
            except BlockingIOError:
                continue
            if not got:
                break
            buf += got
    replies = collections.Counter()
    n, first, last, errors = 0, None, None, 0
    off = 8 if buf[:4] == b"PHYS" else 0
    while off + 4 <= len(buf):
        (size,) = struct.unpack_from("<I", buf, off)
        if off + 4 + size > len(buf):
            break
        env = pb.Envelope()
        env.ParseFromString(bytes(buf[off + 4:off + 4 + size]))
        off += 4 + size
        kind = env.WhichOneof("msg")
        if env.req_id:
            replies[kind] += 1
        elif kind == "state":
            n += 1
            first = first or (env.state.step, env.state.dropped)
            last = (env.state.step, env.state.dropped)
        elif kind == "error":
            errors += 1
    return replies, n, first, last, errors


def log_counts(path):
    """physd's warn and error log lines, counted by level and message."""
    out = collections.Counter()
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r'level=(warn|error) msg="([^"]*)"', line)
                if m:
                    out["%s: %s" % m.groups()] += 1
    except OSError:
        pass
    return dict(out)


def main():
    global pc
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--physd", default=os.path.join(ROOT, "build", "server", "physd"))
    ap.add_argument("--world", default=os.path.join(ROOT, "configs", "worlds",
                                                    "arm_boxes20.xml"))
    ap.add_argument("--pb2-dir", default=None,
                    help="physd_pb2 folder (default: clients/python next to --physd's build)")
    ap.add_argument("--duration", type=float, default=3600.0, help="seconds (default 3600)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds before the RSS slope counts (default min(300, duration/4))")
    ap.add_argument("--rss-slope-max", type=float, default=256.0,
                    help="KB/min of RSS growth after the warm-up that fails the run (256)")
    ap.add_argument("--realtime-s", type=float, default=50.0)
    ap.add_argument("--lockstep-steps", type=int, default=2000)
    ap.add_argument("--barrier-steps", type=int, default=2000)
    ap.add_argument("--joints", default="2,3,4,5,6,7,8",
                    help="joint ids the controller commands (default: arm_boxes20's arm)")
    ap.add_argument("--threads", type=int, default=1, help="physd --threads")
    ap.add_argument("--progress", type=float, default=10.0, help="seconds between progress lines")
    ap.add_argument("--log", help="keep physd's log here (default: a temporary file)")
    ap.add_argument("--sched-fifo", type=int, metavar="PRIO",
                    help="run physd under `chrt -f PRIO` (SCHED_FIFO; needs the privilege): "
                    "its threads then preempt the machine's other work, as a real-time "
                    "deployment would run it")
    args = ap.parse_args()
    if args.warmup is None:
        args.warmup = min(300.0, args.duration / 4)
    pb2 = args.pb2_dir or os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(args.physd))), "clients", "python")
    os.environ.setdefault("PHYSD_PB2_DIR", pb2)
    sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
    import physd_client  # noqa: E402  (after the path is set)
    pc = physd_client

    failures = []
    with tempfile.TemporaryDirectory(prefix="physd-soak-") as tmp:
        sock = os.path.join(tmp, "physd.sock")
        log_path = args.log or os.path.join(tmp, "physd.log")
        with open(log_path, "w") as logf:
            proc = start_physd(args.physd, sock, ["--world", args.world, "--mode", "realtime",
                                                  "--threads", str(args.threads)], stderr=logf,
                               wrapper=["chrt", "-f", str(args.sched_fifo)]
                               if args.sched_fifo is not None else ())
        try:
            out = run(args, sock, proc, failures)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except Exception:
                    proc.kill()
                    proc.wait()
        out["daemon_exit_status"] = proc.returncode
        if proc.returncode != 0:
            failures.append("physd exited with status %d on SIGTERM" % proc.returncode)
        out["daemon_log_warn_error"] = log_counts(log_path)
    out["failures"] = failures
    print(json.dumps(out, indent=2))
    return 1 if failures else 0


def run(args, sock, proc, failures):
    connect = lambda name: pc.Client.connect_unix(sock, name=name, timeout=10.0)  # noqa: E731
    ctl = connect("soak-controller")
    timestep_ns = int(round(ctl.model_info().timestep * 1e9))
    start = time.monotonic()
    stop = Stop(start + args.duration)
    part = Participant(connect("soak-barrier"), stop)
    controller = Controller(ctl, part, args, stop, timestep_ns)
    specs = [("sub_all_1k", 0, dict(bodies=None)),
             ("sub_contacts", 10_000_000, dict(bodies=None, contacts=True)),
             ("sub_joints", 20_000_000, dict(bodies=[], joints=None, actuators=True)),
             ("sub_stats", 100_000_000, dict(bodies=[], stats=True)),
             ("sub_boxes", 5_000_000, dict(bodies=[11, 12, 13]))]
    subs = []
    for name, period, sel in specs:
        c = connect("soak-" + name)
        fc = FrameCount(period, timestep_ns)
        t = Tally(name)
        t.call(c.subscribe, fc, period_ns=period, **sel)
        subs.append((name, c, fc, t))
    raw = RawSubscribers(ctl.pb, sock, 1, 0)  # the non-reader: subscribed, never pumped
    cpu0, me0 = thread_cpu(proc.pid), self_cpu()
    part.start()
    controller.start()

    rss, loads = [], []
    next_tick = start + 1.0
    next_progress = start + args.progress
    while not stop.over():
        time.sleep(max(0.0, min(next_tick, stop.deadline) - time.monotonic()))
        now = time.monotonic()
        kb = rss_kb(proc.pid)
        if kb is None or proc.poll() is not None:
            failures.append("physd died (status %s) at %.0f s" % (proc.poll(), now - start))
            stop.event.set()
            break
        rss.append((now - start, kb))
        loads.append(loadavg1())
        for name, c, fc, t in subs:
            t.call(c.ping)
        next_tick += 1.0
        if now >= next_progress:
            s = part.stats[-1][1] if part.stats else None
            log("soak %5.0f s: rss %d kB, steps %s, overruns %s, rtf %.4f, controller %d "
                "commands, lost %d" % (now - start, kb, s.steps if s else "?",
                                       s.overruns if s else "?",
                                       s.real_time_factor_measured if s else 0,
                                       controller.commands,
                                       controller.tally.lost + part.tally.lost))
            next_progress += args.progress
    stop.event.set()
    controller.join(30)
    part.join(30)
    wall = time.monotonic() - start
    cpu1, me1 = thread_cpu(proc.pid), self_cpu()

    # the non-reader reads once, now: what physd kept for it, and the newest frames
    replies, n, first, last, errs = drain_raw(ctl.pb, raw.socks[0], 1.5)
    nonreader = {"replies": dict(replies), "frames": n, "error_events": errs,
                 "dropped": last[1] if last else None,
                 # every step from its first frame to its last was published to it
                 "unaccounted": (last[0] - first[0] + 1) - n - (last[1] - first[1])
                 if last else None}
    if not n:
        failures.append("non_reader: no stream frame at all")
    if replies.get("welcome", 0) != 1 or replies.get("subscribed", 0) != 1:
        failures.append("non_reader: lost its Welcome or Subscribed reply (%s)" % dict(replies))
    final = part.tally.call(part.c.get_stats)

    clients = {"controller": controller.report(), "barrier": part.report(),
               "non_reader": nonreader}
    for name, c, fc, t in subs:
        r = t.report()
        r.update(fc.report())
        r["stream_error_event"] = str(c.last_stream_error) if c.last_stream_error else None
        r["callback_error"] = repr(c.callback_error) if c.callback_error else None
        clients[name] = r
    for name, r in clients.items():
        if r.get("lost"):
            failures.append("%s: %d lost replies (%s)" % (name, r["lost"], r["first_failure"]))
        if r.get("unaccounted"):
            failures.append("%s: %d frames neither received nor reported dropped"
                            % (name, r["unaccounted"]))
        if r.get("thread_error") or r.get("callback_error"):
            failures.append("%s: %s" % (name, r.get("thread_error") or r.get("callback_error")))

    after = [(t, kb) for t, kb in rss if t >= args.warmup]
    slope = slope_per_min(after)
    if len(after) >= 10 and slope > args.rss_slope_max:
        failures.append("RSS grew %.1f KB/min after the warm-up (limit %g)"
                        % (slope, args.rss_slope_max))
    elif len(after) < 10:
        failures.append("too few RSS samples after the warm-up (%d)" % len(after))
    s0 = part.stats[0][1] if part.stats else None
    s1 = final or (part.stats[-1][1] if part.stats else None)
    drift = controller.drift_ms
    stats = {}
    rt_factors = [s.real_time_factor_measured for _, s in part.stats
                  if s.clock.mode == pc.MODE_REALTIME and s.real_time_factor_measured > 0]
    if s0 and s1:
        stats = {"steps": s1.steps - s0.steps, "overruns": s1.overruns - s0.overruns,
                 "stale_commands": s1.stale_commands - s0.stale_commands,
                 "released_commands": s1.released_commands,
                 "stream_frames_sent": s1.stream_frames_sent,
                 "stream_frames_dropped": s1.stream_frames_dropped,
                 "clients_at_end": s1.clients, "subscriptions_at_end": s1.subscriptions,
                 "step_ms_p50": s1.step_ms_p50, "step_ms_p99": s1.step_ms_p99,
                 "step_ms_max": s1.step_ms_max,
                 # from the polls made in real time (in lock-step and barrier phases the
                 # figure is the clients' stepping rate)
                 "real_time_factor_measured_min": min(rt_factors) if rt_factors else None,
                 "real_time_factor_measured_median":
                     sorted(rt_factors)[len(rt_factors) // 2] if rt_factors else None}
    for name, c, fc, t in subs:
        c.close()
    raw.close()
    part.c.close()
    ctl.close()
    return {
        "bench": "soak", "world": os.path.relpath(args.world, ROOT),
        "duration_s": round(wall, 1), "warmup_s": args.warmup, "threads": args.threads,
        "sched_fifo": args.sched_fifo,
        "cycle": {"realtime_s": args.realtime_s, "lockstep_steps": args.lockstep_steps,
                  "barrier_steps": args.barrier_steps},
        "rss_kb_first": rss[0][1] if rss else None, "rss_kb_last": rss[-1][1] if rss else None,
        "rss_kb_max": max(kb for _, kb in rss) if rss else None,
        "rss_kb_at_warmup": after[0][1] if after else None,
        "rss_slope_kb_per_min": round(slope, 2), "rss_slope_max": args.rss_slope_max,
        "rss_samples": len(rss),
        "realtime": {"phases": len(drift), "sim_s": controller.rt_sim_ns / 1e9,
                     "wall_s": controller.rt_wall_ns / 1e9,
                     "drift_ms_total": round(sum(drift), 3),
                     "drift_ppm": round(1e6 * (controller.rt_sim_ns - controller.rt_wall_ns)
                                        / controller.rt_wall_ns, 1)
                     if controller.rt_wall_ns else None,
                     "drift_ms_per_phase_min": round(min(drift), 3) if drift else None,
                     "drift_ms_per_phase_max": round(max(drift), 3) if drift else None},
        "stats": stats,
        "machine_cpus": os.cpu_count(),
        "loadavg_1min_mean": round(sum(loads) / len(loads), 2) if loads else None,
        "loadavg_1min_max": max(loads) if loads else None,
        "daemon_cpu_s_per_s": round(sum(cpu1[k] - cpu0.get(k, 0.0) for k in cpu1) / wall, 3),
        "soak_script_cpu_s_per_s": round((me1 - me0) / wall, 3),
        "clients": clients,
        "lost_replies": sum(r.get("lost", 0) for r in clients.values()),
    }


if __name__ == "__main__":
    sys.exit(main())
