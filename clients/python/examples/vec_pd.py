#!/usr/bin/python3
"""vec_pd.py - a PD policy over many worlds of one model in one physd (protocol 1.9).

Loads --worlds copies (default 256) of --world (default MuJoCo's humanoid, sent as bytes so
that the daemon needs no allowed root for it) through physd_client.VecEnv, and runs --steps
env steps: every actuator's control is a PD law on its joint, pulling it back to the joint's
start position (kp --kp, kd --kd, plus uniform noise of --noise, clamped by the server to the
ctrl range), one StepBatch round trip per env step for all worlds. An episode ends after
--episode-steps env steps or, for a model whose first joint is free (a floating base), when
the base falls below --fall-z metres; such worlds are reset inside the next step's request.
Trains nothing: it shows the loop and prints a JSON summary (env steps, episodes, steps per
second of wall time on this machine).

    build/server/physd --socket /tmp/physd.sock &
    PHYSD_PB2_DIR=build/clients/python PYTHONPATH=clients/python \\
        /usr/bin/python3 clients/python/examples/vec_pd.py --socket /tmp/physd.sock
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import physd_client as pc  # noqa: E402

HUMANOID = "/usr/share/mujoco/model/humanoid/humanoid.xml"


def actuator_columns(model):
    """For each actuator, the qpos and qvel columns of its joint (hinge/slide: one each), or
    (-1, -1) for an actuator on another joint type."""
    qcol, vcol, q, v = {}, {}, 0, 0
    for j in model.joints:  # the BatchFrame's qpos order
        qcol[j.id], vcol[j.id] = q, v
        q += j.nq
        v += j.nv
    nq1 = {j.id: j.nq for j in model.joints}
    cols = []
    for a in model.actuator_info:
        ok = a.joint in qcol and nq1[a.joint] == 1
        cols.append((qcol[a.joint], vcol[a.joint]) if ok else (-1, -1))
    return cols


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", default=pc.default_socket_path())
    ap.add_argument("--world", default=HUMANOID)
    ap.add_argument("--worlds", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200, help="env steps")
    ap.add_argument("--frame-skip", type=int, default=1)
    ap.add_argument("--episode-steps", type=int, default=100)
    ap.add_argument("--kp", type=float, default=2.0)
    ap.add_argument("--kd", type=float, default=0.1)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--fall-z", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    with open(args.world, "rb") as f:
        doc = f.read()
    rng = np.random.default_rng(args.seed)
    with pc.Client.connect_unix(args.socket, name="vec_pd", timeout=60.0) as c:
        model = None

        def fallen(obs):
            if model is None or not model.joints or model.joints[0].type != "free":
                return np.zeros(len(obs), dtype=bool)
            return obs[:, 2] < args.fall_z

        env = pc.VecEnv(c, data=doc, name=os.path.basename(args.world),
                        num_worlds=args.worlds, frame_skip=args.frame_skip,
                        episode_steps=args.episode_steps, terminate=fallen)
        model = env.model
        cols = actuator_columns(model)
        qc = np.array([q for q, _ in cols])
        vc = np.array([v for _, v in cols])
        on = qc >= 0
        obs = env.reset()
        q0 = obs[:, env.obs_slices["qpos"]][:, np.where(on, qc, 0)]
        episodes, done_len = 0, []
        t0 = time.monotonic()
        for _ in range(args.steps):
            qpos = obs[:, env.obs_slices["qpos"]]
            qvel = obs[:, env.obs_slices["qvel"]]
            q = qpos[:, np.where(on, qc, 0)]
            qd = qvel[:, np.where(on, vc, 0)]
            act = args.kp * (q0 - q) - args.kd * qd
            act += rng.uniform(-args.noise, args.noise, size=act.shape)
            act[:, ~on] = 0.0
            obs, done, t = env.step(act)
            if done.any():
                episodes += int(done.sum())
                done_len.extend((t[done] / (env.timestep * args.frame_skip)).tolist())
        wall = time.monotonic() - t0
        finite = bool(np.isfinite(obs).all())
    print(json.dumps({
        "world": os.path.basename(args.world), "worlds": args.worlds, "env_steps": args.steps,
        "frame_skip": args.frame_skip, "episodes_ended": episodes,
        "mean_episode_steps": (sum(done_len) / len(done_len)) if done_len else None,
        "wall_s": round(wall, 3),
        "world_steps_per_s": round(args.worlds * args.steps / wall, 1) if wall > 0 else None,
        "finite": finite}))
    return 0 if finite else 1


if __name__ == "__main__":
    sys.exit(main())
