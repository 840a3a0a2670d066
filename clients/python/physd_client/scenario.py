"""physd_client.scenario - one rollout described as data, run on a physd, with a result that is
plain data too (so it travels through Dask, JSON or pickle unchanged).

A scenario is a dict:

    {"name": "drop-3",                       # optional, copied into the result
     "world": "/abs/path/world.xml",         # a path the daemon may read (its allowed roots),
     # or "world_xml": "<mujoco>...</mujoco>" (the document itself)
     "solver": "pgs",                        # optional: LoadWorld's solver choice
     "body_states": [{"id": 3, "linvel": [0.5, 0, 0]}],  # optional: SetBodyState after the load
     "actuators": {"shoulder": 0.3},         # optional: SetActuatorControl, held for the run
     "steps": 500,                           # lock-step steps
     "observe_every": 100}                   # optional: also record every k steps (0 = the end)

and its result:

    {"name": ..., "step": 500, "sim_time_ns": ..., "frames": [{"step": k, "bodies": [[id, px,
     py, pz, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz], ...]}, ...]}

the last frame being the state after `steps`. The run loads the world first, so a scenario
does not depend on what ran before it on the same daemon: the same scenario gives the same
bits on any daemon of the same build (physd is deterministic for any thread count).
"""
from .client import MODE_LOCKSTEP, Client
from .daemon import PhysdProcess


def _body_row(b):
    return [b.id, b.pos.x, b.pos.y, b.pos.z, b.quat.w, b.quat.x, b.quat.y, b.quat.z,
            b.linvel.x, b.linvel.y, b.linvel.z, b.angvel.x, b.angvel.y, b.angvel.z]


def _frame(f):
    return {"step": f.step, "bodies": [_body_row(b) for b in f.bodies]}


def run_scenario(client, scenario):
    """Run `scenario` (see the module) on a connected :class:`Client`; returns its result.
    The daemon is put in lock-step mode. Raises ValueError for a scenario without a world or
    a number of steps, and the client's errors (ServerError naming what the daemon refused)."""
    steps = int(scenario.get("steps", 0))
    if steps < 1:
        raise ValueError("scenario %r: steps must be >= 1" % scenario.get("name"))
    every = int(scenario.get("observe_every", 0)) or steps
    if "world" in scenario:
        client.load_world(path=scenario["world"], solver=scenario.get("solver", ""))
    elif "world_xml" in scenario:
        client.load_world(data=scenario["world_xml"], solver=scenario.get("solver", ""))
    else:
        raise ValueError("scenario %r: give world or world_xml" % scenario.get("name"))
    client.set_mode(MODE_LOCKSTEP)
    for bs in scenario.get("body_states", ()):
        client.set_body_state(bs["id"], pos=bs.get("pos"), quat=bs.get("quat"),
                              linvel=bs.get("linvel"), angvel=bs.get("angvel"))
    if scenario.get("actuators"):
        client.set_actuator_control(scenario["actuators"])
    frames, done, last = [], 0, None
    while done < steps:
        n = min(every, steps - done)
        last = client.step_and_observe(n=n)
        done += n
        frames.append(_frame(last))
    return {"name": scenario.get("name"), "step": last.step, "sim_time_ns": last.sim_time_ns,
            "frames": frames}


def run_local(scenarios, physd="physd", args=()):
    """The single-machine reference: start one private physd (``physd`` with ``args``), run
    every scenario on it in order, stop it. Returns the results in the order given."""
    with PhysdProcess(physd, args) as d:
        with Client.connect_unix(d.socket, name="physd_client.scenario") as c:
            return [run_scenario(c, s) for s in scenarios]
