#!/usr/bin/python3
"""batch_env.py - environment steps per second of many worlds (issue 16), three ways in one run.

For each model, world count N and thread count T:
  socket     one physd (--threads T) holding a batch of N worlds (LoadWorld.world_count), driven
             from Python through StepBatch, one request per env step carrying every world's
             actuator controls (zeros) and returning every world's qpos and qvel, as a vector
             env does (physd_client.Client.step_batch);
  groups     the same daemon and worlds in G groups (--groups, default 2; N >= G), each group's
             StepBatch in flight while the client reads another's reply (Client.step_batch_send
             and step_batch_recv, as VecEnv.send / recv: EnvPool's asynchronous mode), every
             world stepped once per env step all the same;
  physbench  physbench FILE --worlds N --threads T: the same batch stepped in-process, no socket;
  mujoco     mjbench FILE --worlds N: MuJoCo's single-thread loop of mj_step over N mjData of
             one model in one process (libmujoco; T = 1 only, MuJoCo steps serially);
  mujoco_2proc  (T = 2, N even) the same loop as two mjbench processes of N/2 worlds started
             together: what MuJoCo's loop gets per core when both cores work, as physd's two
             threads make them.
Each row also gives, per way, its per-core figure (env steps/s over T) against MuJoCo's loop,
as the median over the repeats of the ratio within each repeat (`WAY_per_core_vs_mujoco`; at
T = 2 also `WAY_per_core_vs_mujoco_2proc`, against half the two processes' sum): the samples of
one repeat lie seconds apart, so a slow minute of a shared machine falls on both.
Every run starts from the model's reference state (qpos0, no keyframe), takes --warmup untimed
env steps, then times --steps env steps; env_steps_per_s = N x steps / wall time of the timed
steps, for all three ways (physbench's env_steps_per_s_wall, not its median-based
env_steps_per_s). --repeat R runs the whole grid R times (the three ways alternated inside each repeat, so
a slow minute of a shared machine falls on all of them) and reports each cell's median, with
its R samples beside it. The machine's load average is printed with the figures: on a machine
shared with other work they are not final.

Models (default): MuJoCo's humanoid (Debian's libmujoco-samples) and bench/robots/
quadruped_fixed.xml (a 12-joint quadruped on a test stand; configs/worlds/quadrupeds8.xml holds
eight free quadrupeds per world and can be named with --model quadrupeds8=PATH). Prints one
JSON document on stdout; progress goes to stderr.

    /usr/bin/python3 bench/batch_env.py --build build > batch_env.json
"""
import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MODELS = ["humanoid=/usr/share/mujoco/model/humanoid/humanoid.xml",
                  "quadruped=" + os.path.join(HERE, "robots", "quadruped_fixed.xml")]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_json(cmd):
    """Run a benchmark program and return its JSON (the last line of stdout)."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600,
                       env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (cmd[0], r.returncode, r.stderr[-2000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def mujoco_two_processes(mjbench, path, n, warmup, steps):
    """env steps per second of MuJoCo's loop as two mjbench processes of n/2 worlds each,
    started together (both cores busy, as physd's two threads keep them): the sum of the two"""
    cmd = [mjbench, path, "--worlds", str(n // 2), "--warmup", str(warmup), "--steps",
           str(steps), "--json"]
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for _ in range(2)]
    total = 0.0
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise RuntimeError("mjbench exited %d: %s" % (p.returncode, err[-2000:]))
        total += json.loads(out.strip().splitlines()[-1])["env_steps_per_s"]
    return total


class Daemon:
    """physd on a socket in a temp dir, with T engine threads."""

    def __init__(self, physd, threads):
        self.dir = tempfile.mkdtemp(prefix="physd-batch-")
        self.sock = os.path.join(self.dir, "physd.sock")
        self.log = open(os.path.join(self.dir, "physd.log"), "w")
        self.proc = subprocess.Popen([physd, "--socket", self.sock, "--allowed-root", self.dir,
                                      "--threads", str(threads)], stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     env=dict(os.environ, OMP_WAIT_POLICY="passive"))
        deadline = time.monotonic() + 30
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("physd did not start (see %s)" % self.log.name)
            time.sleep(0.02)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(30)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


def socket_rate(pc, sock, doc, name, worlds, warmup, steps):
    """env steps per second through StepBatch (Python client, one request per env step)"""
    with pc.Client.connect_unix(sock, name="batch_env", timeout=600) as c:
        c.load_world(data=doc, name=name, world_count=worlds)
        nu = len(c.model_info().actuators)
        ctrl = [0.0] * (worlds * nu)
        for _ in range(warmup):
            c.step_batch(ctrl=ctrl, qpos=True, qvel=True)
        t0 = time.monotonic()
        for _ in range(steps):
            f = c.step_batch(ctrl=ctrl, qpos=True, qvel=True)
        wall = time.monotonic() - t0
        if any(f.status):
            raise RuntimeError("%s x %d: a world's step failed: %s" % (name, worlds, f.message))
        c.load_world(data=doc, name=name)  # give the batch's memory back
    return worlds * steps / wall


def groups_rate(pc, sock, doc, name, worlds, warmup, steps, groups):
    """env steps per second through StepBatch in `groups` groups in flight (step_batch_send /
    step_batch_recv), each group sent again as soon as its reply is read"""
    import numpy as np
    with pc.Client.connect_unix(sock, name="batch_env", timeout=600) as c:
        c.load_world(data=doc, name=name, world_count=worlds)
        nu = len(c.model_info().actuators)
        ids = [g.tolist() for g in np.array_split(np.arange(worlds), groups)]
        ctrl = [np.zeros((len(g), nu)) for g in ids]

        def run(n):
            pending = [c.step_batch_send(worlds=g, ctrl=a, qpos=True, qvel=True)
                       for g, a in zip(ids, ctrl)]
            left = [n - 1] * groups
            while any(p is not None for p in pending):
                for k in range(groups):
                    if pending[k] is None:
                        continue
                    f = c.step_batch_recv(pending[k])
                    if any(f.status):
                        raise RuntimeError("%s x %d: a world's step failed: %s"
                                           % (name, worlds, f.message))
                    pending[k] = None
                    if left[k] > 0:
                        left[k] -= 1
                        pending[k] = c.step_batch_send(worlds=ids[k], ctrl=ctrl[k], qpos=True,
                                                       qvel=True)
        if warmup:
            run(warmup)
        t0 = time.monotonic()
        run(steps)
        wall = time.monotonic() - t0
        c.load_world(data=doc, name=name)  # give the batch's memory back
    return worlds * steps / wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build dir")
    ap.add_argument("--model", action="append", help="NAME=PATH (repeatable)")
    ap.add_argument("--worlds", default="1,16,64,256")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--warmup", type=int, default=100, help="untimed env steps")
    ap.add_argument("--steps", type=int, default=400, help="timed env steps")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the grid; medians reported")
    ap.add_argument("--groups", type=int, default=2,
                    help="groups in flight for the groups way (0 or 1: leave it out)")
    ap.add_argument("--no-mujoco", action="store_true", help="leave MuJoCo out")
    args = ap.parse_args()

    physd = os.path.join(args.build, "server", "physd")
    physbench = os.path.join(args.build, "bench", "physbench")
    mjbench = os.path.join(args.build, "bench", "mjbench")
    sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
    os.environ.setdefault("PHYSD_PB2_DIR", os.path.join(args.build, "clients", "python"))
    try:
        import physd_client as pc  # noqa: E402
        pc.load_proto()
    except ImportError as e:
        log("batch_env: the Python client cannot load physd_pb2 (%s): skipping" % e)
        return 77

    use_mujoco = not args.no_mujoco and os.access(mjbench, os.X_OK)
    models = [m.split("=", 1) for m in (args.model or DEFAULT_MODELS)]
    worlds = [int(w) for w in args.worlds.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    if args.repeat < 1 or args.steps < 1 or args.warmup < 0:
        log("batch_env: --repeat and --steps must be at least 1, --warmup at least 0")
        return 2
    samples = {}  # (model, worlds, threads) -> {way: [env steps/s per repeat]}
    load_before = os.getloadavg()[0]
    for rep in range(args.repeat):
        for t in threads:
            d = Daemon(physd, t)
            try:
                for name, path in models:
                    with open(path, "rb") as f:
                        doc = f.read()
                    for n in worlds:
                        log("repeat %d/%d: %s x %d, %d thread(s)" % (rep + 1, args.repeat, name, n, t))
                        cell = samples.setdefault((name, path, n, t), {})
                        cell.setdefault("socket", []).append(
                            socket_rate(pc, d.sock, doc, name, n, args.warmup, args.steps))
                        if args.groups >= 2 and n >= args.groups:
                            cell.setdefault("groups", []).append(groups_rate(
                                pc, d.sock, doc, name, n, args.warmup, args.steps, args.groups))
                        pb = run_json([physbench, path, "--worlds", str(n), "--threads", str(t),
                                       "--warmup", str(args.warmup), "--steps", str(args.steps),
                                       "--no-sleep", "--json"])
                        # wall time, as the socket's and mjbench's figures: physbench's
                        # env_steps_per_s is from the median batch step, which leaves out the
                        # phase's slow steps (the humanoid's fall: median 12 ms, mean 18 ms)
                        cell.setdefault("physbench", []).append(pb["env_steps_per_s_wall"])
                        if use_mujoco and t == 1:
                            mj = run_json([mjbench, path, "--worlds", str(n), "--warmup",
                                           str(args.warmup), "--steps", str(args.steps), "--json"])
                            cell.setdefault("mujoco", []).append(mj["env_steps_per_s"])
                        if use_mujoco and t == 2 and n >= 2 and n % 2 == 0:
                            cell.setdefault("mujoco_2proc", []).append(mujoco_two_processes(
                                mjbench, path, n, args.warmup, args.steps))
            finally:
                rc = d.stop()
                if rc != 0:
                    log("physd exited with %d" % rc)
    rows = []
    for (name, path, n, t), cell in samples.items():
        row = {"model": name, "file": path, "worlds": n, "threads": t}
        for way, vals in cell.items():
            row[way + "_env_steps_per_s"] = round(statistics.median(vals), 1)
            row[way + "_samples"] = [round(v, 1) for v in vals]
        # per-core ratios paired by repeat (the samples of one repeat lie seconds apart, so a
        # slow minute of the machine falls on both): each way's figure over t cores against
        # MuJoCo's one-thread loop of the same repeat, and at t = 2 against MuJoCo's loop run
        # as two processes of n/2 worlds at once (per core: half their sum), the same two cores
        mj1 = samples.get((name, path, n, 1), {}).get("mujoco", [])
        mj2 = cell.get("mujoco_2proc", [])
        for way, vals in cell.items():
            if way.startswith("mujoco"):
                continue
            for key, ref, cores in (("mujoco", mj1, 1), ("mujoco_2proc", mj2, 2)):
                pairs = [v / t / (m / cores) for v, m in zip(vals, ref)]
                if pairs and (key == "mujoco" or t == 2):
                    row["%s_per_core_vs_%s" % (way, key)] = round(statistics.median(pairs), 3)
        rows.append(row)
    print(json.dumps({
        "benchmark": "batch_env", "warmup": args.warmup, "steps": args.steps,
        "repeat": args.repeat, "statistic": "median over the repeats",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "loadavg_1min_before": round(load_before, 2),
                    "loadavg_1min_after": round(os.getloadavg()[0], 2)},
        "mujoco": "mjbench --worlds N, one thread" if use_mujoco else None,
        "groups": args.groups,
        "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
