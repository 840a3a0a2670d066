#!/usr/bin/python3
"""pd_lockstep.py - a 1 kHz lock-step PD controller on physd.

Each cycle is one StepAndObserve round trip: the controller reads the state the previous cycle
returned, computes its command and sends it with the next step, so the simulation advances
exactly one timestep per control period (1 kHz with the default 1 ms timestep), whatever the
wall-clock speed.

* A model with joints (hinge/slide), e.g. configs/worlds/arm_gripper.xml (7-DOF arm, 1 ms
  timestep: 1 kHz lock-step): every hinge tracks a raised-cosine swing from its start position
  to start - --amp rad and back at --freq Hz (slides hold their start) with a joint-space PD command
  (CMD_PD: position and velocity targets, gains --kp/--kd) sent inside each StepAndObserve;
  position actuators on those joints (the model's servos) get the same target as their control,
  so they help rather than hold the old pose. The tracking error |q_target - q| is read from the
  joint state the frame returns (protocol 1.1) and printed; the run fails when its RMS after the
  first --settle seconds is above --tol (rad).
* A free-body world (the engine has no joints yet): holds one free body (--body, default the
  first dynamic one) at a target pose (its start pose raised by --lift metres) with PD
  forces and torques applied through ApplyWrench, with gravity compensation.

Prints the tracking error every --print-every cycles and a JSON summary at the end; exits 1 if
the final position error is above --tol.

    build/server/physd --socket /tmp/physd.sock --world configs/worlds/arm_gripper.xml &
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
    # position servos on these joints follow the same targets
    servo = {a.joint: a.id for a in info.actuator_info if a.joint in ids}
    start = c.get_state(bodies=[], joints=ids)
    q0 = {js.id: js.qpos[0] for js in start.joints}
    h = info.timestep
    amp = [args.amp if j.type == "hinge" else 0.0 for j in joints]
    for k, j in enumerate(joints):
        if j.range_lo < j.range_hi:  # keep the sine inside the joint's range
            amp[k] = max(0.0, min(amp[k], 0.9 * (q0[j.id] - j.range_lo)))

    def target(t):
        # from the start position down to q0 - amp and back, smoothly (zero velocity at t = 0):
        # on arm_gripper.xml negative angles raise the arm, away from the table
        w = 2.0 * math.pi * args.freq
        q = [q0[j.id] - amp[k] * 0.5 * (1.0 - math.cos(w * t)) for k, j in enumerate(joints)]
        qd = [-amp[k] * 0.5 * w * math.sin(w * t) for k in range(len(joints))]
        return q, qd

    sq_sum, n_err, max_err, err = 0.0, 0, 0.0, float("nan")
    settle = int(args.settle / h)
    for i in range(args.steps):
        q, qd = target((i + 1) * h)  # where the joints should be after this step
        cmd = dict(joint_ids=ids, mode=pc.CMD_PD, q=q, qd=qd, kp=[args.kp] * len(ids),
                   kd=[args.kd] * len(ids), seq=i + 1)
        ctrl = {servo[jid]: q[k] for k, jid in enumerate(ids) if jid in servo}
        frame = c.step_and_observe(n=1, command=cmd, bodies=[], joints=ids, actuators=ctrl)
        got = {js.id: js.qpos[0] for js in frame.joints}
        err = max(abs(q[k] - got[jid]) for k, jid in enumerate(ids))
        if i >= settle:
            sq_sum += sum((q[k] - got[jid]) ** 2 for k, jid in enumerate(ids)) / len(ids)
            n_err += 1
            max_err = max(max_err, err)
        if args.print_every and i % args.print_every == 0:
            print("step %6d  tracking error max %.6f rad over %d joints  last_cmd_seq %d"
                  % (frame.step, err, len(ids), frame.last_cmd_seq))
    rms = math.sqrt(sq_sum / n_err) if n_err else float("nan")
    print("tracking error after %.2f s: rms %.6f, max %.6f (rad or m), control rate %.0f Hz"
          % (args.settle, rms, max_err, 1.0 / h))
    return rms, max_err


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
    ap.add_argument("--amp", type=float, default=0.3, help="joints: swing (rad)")
    ap.add_argument("--freq", type=float, default=0.5, help="joints: swing frequency (Hz)")
    ap.add_argument("--settle", type=float, default=0.2,
                    help="joints: seconds before the error counts")
    ap.add_argument("--kp", type=float,
                    help="stiffness (free body: per unit mass, default 400; joints: N m/rad "
                         "or N/m, default 20000: the gains act implicitly in the step)")
    ap.add_argument("--kd", type=float,
                    help="damping (as --kp; default 40 per unit mass / 400 for joints)")
    ap.add_argument("--tol", type=float, default=0.01,
                    help="error bound: final position error (m), joints: RMS tracking error")
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
            args.kp = 20000.0 if args.kp is None else args.kp
            args.kd = 400.0 if args.kd is None else args.kd
            pos_err, rot_err = run_joints(c, info, args)
        else:
            mode = "free_body"
            args.kp = 400.0 if args.kp is None else args.kp
            args.kd = 40.0 if args.kd is None else args.kd
            pos_err, rot_err = run_free_body(c, info, args)
        wall = time.monotonic() - t0
    out = {"mode": mode, "steps": args.steps, "wall_s": round(wall, 3)}
    if mode == "joints":
        out.update(tracking_error_rms=pos_err, tracking_error_max=rot_err)
    else:
        out.update(position_error=pos_err, orientation_error=rot_err)
    print(json.dumps({**out,
                      "cycle_us": round(wall / max(args.steps, 1) * 1e6, 1)}))
    return 0 if pos_err <= args.tol else 1


if __name__ == "__main__":
    sys.exit(main())
