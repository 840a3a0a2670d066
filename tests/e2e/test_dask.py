#!/usr/bin/python3
"""test_dask.py - physd on a Dask cluster (clients/python/physd_client/dask_plugin.py) against a
real one: `dask-scheduler` and two `dask-worker` processes (Debian's python3-distributed) on
127.0.0.1, each worker with its own physd started by PhysdWorkerPlugin.

Checks:
  - the helpers' errors: a physd that cannot start raises RuntimeError with its log, a scenario
    without steps or a world raises ValueError, a task on a worker without the plugin raises
    RuntimeError saying to register it;
  - the plugin starts one physd per worker (two distinct live processes, each on a socket in
    its worker's local directory);
  - a sweep of 8 scenarios (the default world; a ball thrown at 8 speeds, a box spun at 8
    rates, two solvers; 300 steps, a frame every 100) mapped over the cluster gives results
    equal bit for bit (every double's bytes) to the same sweep run on one local physd
    (run_local), in the order given, and both workers ran some;
  - a scenario the daemon refuses (a world outside its allowed roots) raises ServerError
    through Dask naming the path, and the next sweep still runs;
  - at the workers' SIGTERM the plugin's teardown stops each physd (process gone, socket file
    removed).
Every process the test started is stopped in the end, also on failure.
Exit status: 0 pass, 1 fail, 77 skip (python3-distributed missing or the daemon not built).
"""
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

PHYSD_BIN = os.environ.get("PHYSD_BIN", "")
if not os.access(PHYSD_BIN, os.X_OK):
    print("SKIP: PHYSD_BIN is not an executable physd")
    sys.exit(77)
try:
    import distributed
except ImportError:
    print("SKIP: python3-distributed is not installed (apt-get install python3-distributed)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pycheck  # noqa: E402
from pycheck import check, free_port  # noqa: E402
import physd_client as pc  # noqa: E402
from physd_client.dask_plugin import PhysdWorkerPlugin, map_scenarios, worker_plugin  # noqa: E402
from physd_client.daemon import PhysdProcess  # noqa: E402
from physd_client.scenario import run_local  # noqa: E402

SRC = os.environ.get("PHYSD_SOURCE_ROOT",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WORLDS = os.path.realpath(os.path.join(SRC, "configs", "worlds"))


def dask_cmd(name):
    """The Debian console script (dask-scheduler, dask-worker), else the module behind it."""
    exe = shutil.which(name)
    if exe:
        return [exe]
    return ["/usr/bin/python3", "-m", "distributed.cli." + name.replace("-", "_")]


def scenarios():
    out = []
    for i in range(8):
        out.append({"name": "sweep-%d" % i, "world": os.path.join(WORLDS, "default.xml"),
                    "solver": ("subadmm", "pgs")[i % 2],
                    "body_states": [{"id": 3, "linvel": [-1.0 - 0.25 * i, 0.0, 0.0]},
                                    {"id": 2, "angvel": [0.0, 0.0, 0.5 * i]}],
                    "steps": 300, "observe_every": 100})
    return out


def bits(result):
    """Every double of a result's frames as bytes (so -0.0 and NaN compare by their bits)."""
    vals = [x for f in result["frames"] for row in f["bodies"] for x in row[1:]]
    ids = [row[0] for f in result["frames"] for row in f["bodies"]]
    steps = [f["step"] for f in result["frames"]]
    return struct.pack("<%dd" % len(vals), *vals), ids, steps


def alive(pid):
    """1 when `pid` runs (a zombie counts as gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def main():
    tmp = tempfile.mkdtemp(prefix="physd-dask-")
    procs, physd_pids = [], []
    port = free_port()
    addr = "tcp://127.0.0.1:%d" % port
    logs = {}

    def spawn(name, cmd):
        logs[name] = os.path.join(tmp, name + ".log")
        p = subprocess.Popen(cmd, stdout=open(logs[name], "w"), stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        procs.append(p)
        return p

    dask = None
    try:
        spawn("scheduler", dask_cmd("dask-scheduler") +
              ["--host", "127.0.0.1", "--port", str(port), "--no-dashboard"])
        workers = [spawn("worker%d" % i, dask_cmd("dask-worker") +
                         [addr, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                          "--no-dashboard", "--memory-limit", "0", "--name", "w%d" % i,
                          "--local-directory", os.path.join(tmp, "w%d" % i)])
                   for i in range(2)]
        # the helpers' own errors, before the cluster is needed
        try:
            PhysdProcess(PHYSD_BIN, ["--no-such-flag"]).start()
            check(False, "a physd that cannot start raises")
        except RuntimeError as e:
            check("no-such-flag" in str(e), "a physd that cannot start: RuntimeError with its log")
        for bad, what in (({"world_xml": "<mujoco/>", "steps": 0}, "steps must be >= 1"),
                          ({"steps": 5}, "give world or world_xml")):
            try:
                run_local([bad], PHYSD_BIN)
                check(False, "scenario %r raises" % bad)
            except ValueError as e:
                check(what in str(e), "scenario %r: ValueError %s" % (bad, e))

        dask = distributed.Client(addr, timeout=30)
        dask.wait_for_workers(2, timeout=30)
        try:
            dask.run(worker_plugin)
            check(False, "worker_plugin() without the plugin raises")
        except RuntimeError as e:
            check("register PhysdWorkerPlugin" in str(e), "without the plugin: %s" % e)
        dask.register_worker_plugin(
            PhysdWorkerPlugin(PHYSD_BIN, ["--allowed-root", WORLDS, "--threads", "1"]), name="physd")

        # one physd per worker
        info = dask.run(lambda: (worker_plugin().pid, worker_plugin().socket))
        physd_pids = [pid for pid, _ in info.values()]
        check(len(info) == 2 and len(set(physd_pids)) == 2 and all(alive(p) for p in physd_pids),
              "two workers, each with its own live physd: %s" % info)
        check(all(sock.startswith(os.path.join(tmp, "w")) for _, sock in info.values()),
              "each socket in its worker's local directory")

        # the sweep over the cluster equals the sweep on one local daemon, bit for bit
        sweep = scenarios()
        got = map_scenarios(dask, sweep)
        ref = run_local(sweep, PHYSD_BIN, ["--allowed-root", WORLDS, "--threads", "1"])
        check([r["name"] for r in got] == [s["name"] for s in sweep], "results in scenario order")
        check(all(r["step"] == 300 and len(r["frames"]) == 3 and len(r["frames"][0]["bodies"]) == 7
                  for r in got), "each result: step 300, 3 frames of 7 bodies")
        same = [bits(a) == bits(b) for a, b in zip(got, ref)]
        check(len(got) == 8 and all(same), "8 results equal the local run bit for bit: %s" % same)
        distinct = len({bits(r)[0] for r in got})
        check(distinct == 8, "the 8 scenarios differ from one another (%d distinct)" % distinct)
        used = {r["worker"] for r in got}
        check(len(used) == 2, "both workers ran scenarios: %s" % sorted(used))

        # a refused scenario: ServerError through Dask, and the cluster goes on
        bad = [{"name": "bad", "world": "/etc/passwd", "steps": 10}]
        try:
            map_scenarios(dask, bad)
            check(False, "a world outside the allowed roots raises")
        except pc.ServerError as e:
            check("/etc/passwd" in str(e), "ServerError naming the path: %s" % e)
        again = map_scenarios(dask, sweep[:2])
        check(all(bits(a) == bits(b) for a, b in zip(again, ref[:2])),
              "after the error, a sweep still gives the same bits")

        # teardown at the workers' SIGTERM stops each physd
        dask.close()
        dask = None
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(p) for p in physd_pids):
            time.sleep(0.1)
        check(not any(alive(p) for p in physd_pids), "every physd stopped with its worker")
        check(not any(os.path.exists(s) for _, s in info.values()), "their sockets are removed")
    except Exception as e:  # a failure of the cluster itself: reported, then cleaned up
        check(False, "unexpected %s: %s" % (type(e).__name__, e))
    finally:
        if dask is not None:
            dask.close()
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for pid in physd_pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if pycheck.failures:
            for name, path in logs.items():
                print("---- %s log (end)" % name)
                with open(path) as f:
                    print(f.read()[-2500:])
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if pycheck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
