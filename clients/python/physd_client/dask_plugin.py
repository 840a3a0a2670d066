"""physd_client.dask_plugin - physd on a Dask cluster (Debian's python3-distributed): Dask
schedules, deploys (Kubernetes, Slurm, SSH, a cloud: whatever Dask itself runs on) and gathers;
physd writes no scheduler of its own.

    from distributed import Client as DaskClient
    from physd_client.dask_plugin import PhysdWorkerPlugin, map_scenarios

    dask = DaskClient("tcp://scheduler:8786")
    dask.register_worker_plugin(PhysdWorkerPlugin("/usr/bin/physd", ["--threads", "1"]),
                                name="physd")
    results = map_scenarios(dask, scenarios)   # see physd_client.scenario for their form

Every worker starts one physd at setup on a private Unix socket in a folder of the worker's
local directory, and stops it (SIGTERM: physd drains and exits) at teardown. A task runs its
scenario on its own worker's daemon; tasks of one worker take turns on it (a lock), so a worker
with several threads runs one scenario at a time: start workers with ``--nthreads 1`` and
scale with workers. Results come back in the order of the scenarios.

Imports ``distributed``: only this module of the package needs it.
"""
import threading

from distributed import WorkerPlugin, get_worker

from .client import Client
from .daemon import PhysdProcess
from .scenario import run_scenario

PLUGIN_NAME = "physd"


class PhysdWorkerPlugin(WorkerPlugin):
    """Starts one physd per Dask worker (see the module). physd: the executable as the workers
    see it; args: more flags for it (e.g. ["--allowed-root", "/data/worlds"]); start_timeout:
    seconds to wait for its socket. Pickled to the workers, so it holds only these settings
    until setup runs there."""

    name = PLUGIN_NAME

    def __init__(self, physd="physd", args=(), start_timeout=20.0):
        self.physd = physd
        self.args = list(args)
        self.start_timeout = start_timeout
        self.daemon = None
        self.lock = None

    def setup(self, worker):
        self.lock = threading.Lock()
        self.daemon = PhysdProcess(self.physd, self.args, parent=worker.local_directory,
                                   start_timeout=self.start_timeout).start()

    def teardown(self, worker):
        if self.daemon is not None:
            self.daemon.stop()
            self.daemon = None

    @property
    def socket(self):
        """The worker's physd socket (None before setup and after teardown)."""
        return self.daemon.socket if self.daemon else None

    @property
    def pid(self):
        """The worker's physd process id (None when it is not running)."""
        return self.daemon.proc.pid if self.daemon and self.daemon.proc else None


def worker_plugin():
    """In a task: this worker's PhysdWorkerPlugin; RuntimeError when it is not registered."""
    w = get_worker()
    p = w.plugins.get(PLUGIN_NAME)
    if p is None or p.daemon is None:
        raise RuntimeError("no physd on worker %s: register PhysdWorkerPlugin first" % w.address)
    return p


def run_on_worker(scenario):
    """A task: run `scenario` on this worker's physd (taking turns with the worker's other
    tasks). The result is run_scenario's with ``worker`` (the worker's address) added."""
    p = worker_plugin()
    with p.lock:
        with Client.connect_unix(p.socket, name="physd_client.dask") as c:
            result = run_scenario(c, scenario)
    result["worker"] = get_worker().address
    return result


def map_scenarios(dask_client, scenarios, **kwargs):
    """Run every scenario on the cluster and gather the results, in the order given. kwargs go
    to ``Client.map`` (e.g. ``workers=`` or ``retries=``); tasks are never merged as "pure":
    each scenario runs."""
    futures = dask_client.map(run_on_worker, list(scenarios), pure=False, **kwargs)
    return dask_client.gather(futures)
