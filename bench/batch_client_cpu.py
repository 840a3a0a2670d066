#!/usr/bin/python3
"""batch_client_cpu.py - the Python client's CPU per StepBatch round trip (issue 16): the part of
a vector env's step spent in the client, on the critical path of socket throughput.

One physd (--threads T) holds N copies of a model (MuJoCo's humanoid by default). Two loops,
each --warmup untimed then --steps timed batch steps, every world's controls (zeros) sent and
its qpos and qvel returned:
  step_batch  Client.step_batch(ctrl=<list of floats>, qpos=True, qvel=True), the reply left as
              returned (as bench/batch_env.py's socket column does);
  vec_env     VecEnv.step(<numpy (N, nu) zeros>), which also builds the (N, nq + nv) obs array.
For each loop: wall ms and client CPU ms (this process's user + system time, from getrusage)
per batch step, and the daemon's CPU ms per batch step (/proc). --repeat R runs both loops R
times and reports medians with the samples. --client DIR takes physd_client from DIR (e.g. an
export of another revision's clients/python) to compare two clients against one daemon.
Timings on a shared machine are noisy: the load average is printed with them.

    /usr/bin/python3 bench/batch_client_cpu.py --build build > batch_client_cpu.json
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import batch_env  # noqa: E402  (its Daemon)


def proc_cpu(pid):
    """user + system seconds of process pid"""
    with open("/proc/%d/stat" % pid) as f:
        r = f.read()
    r = r[r.rindex(")") + 2:].split()
    return (int(r[11]) + int(r[12])) / os.sysconf("SC_CLK_TCK")


def self_cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def timed(fn, warmup, steps, pid):
    for _ in range(warmup):
        fn()
    c0, d0, t0 = self_cpu(), proc_cpu(pid), time.monotonic()
    for _ in range(steps):
        fn()
    wall = time.monotonic() - t0
    return {"wall_ms": 1e3 * wall / steps, "client_cpu_ms": 1e3 * (self_cpu() - c0) / steps,
            "daemon_cpu_ms": 1e3 * (proc_cpu(pid) - d0) / steps}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="meson build dir")
    ap.add_argument("--client", default=os.path.join(ROOT, "clients", "python"),
                    help="folder holding the physd_client package")
    ap.add_argument("--model", default="/usr/share/mujoco/model/humanoid/humanoid.xml",
                    help="MJCF file, loaded as N copies")
    ap.add_argument("--worlds", type=int, default=256, help="N, worlds in the batch")
    ap.add_argument("--threads", type=int, default=1, help="physd --threads")
    ap.add_argument("--warmup", type=int, default=50, help="untimed batch steps per loop")
    ap.add_argument("--steps", type=int, default=300, help="timed batch steps per loop")
    ap.add_argument("--repeat", type=int, default=3, help="runs of both loops; medians")
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.client))
    os.environ.setdefault("PHYSD_PB2_DIR", os.path.join(a.build, "clients", "python"))
    import numpy as np
    import physd_client as pc
    with open(a.model) as f:
        doc = f.read()
    d = batch_env.Daemon(os.path.join(a.build, "server", "physd"), a.threads)
    runs = {"step_batch": [], "vec_env": []}
    try:
        with pc.Client.connect_unix(d.sock, name="batch_client_cpu", timeout=600) as c:
            for _ in range(a.repeat):
                env = pc.VecEnv(c, data=doc, num_worlds=a.worlds, episode_steps=10 ** 9)
                env.reset()
                ctrl = [0.0] * (a.worlds * env.nu)
                actions = np.zeros((a.worlds, env.nu))
                runs["step_batch"].append(timed(
                    lambda: c.step_batch(ctrl=ctrl, qpos=True, qvel=True), a.warmup, a.steps,
                    d.proc.pid))
                runs["vec_env"].append(timed(lambda: env.step(actions), a.warmup, a.steps,
                                             d.proc.pid))
                batch_env.log("run: %s" % json.dumps({k: v[-1] for k, v in runs.items()}))
    finally:
        d.stop()
    out = {"model": os.path.basename(a.model), "worlds": a.worlds, "threads": a.threads,
           "steps": a.steps, "repeat": a.repeat, "client": os.path.abspath(a.client),
           "loadavg": os.getloadavg()}
    for loop, samples in runs.items():
        out[loop] = {k: {"median": statistics.median(s[k] for s in samples),
                         "samples": [round(s[k], 3) for s in samples]} for k in samples[0]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
