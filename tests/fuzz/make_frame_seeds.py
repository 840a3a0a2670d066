#!/usr/bin/python3
"""make_frame_seeds.py - write the seed inputs of fuzz/fuzz_frames.c into tests/fuzz/corpus/frames/.

Each seed is one byte (the feed chunk size - 1), the client preamble ("PHYS", u16 major,
u16 minor, little-endian), then [u32 LE length][Envelope] frames: one session's worth of
simulation-thread requests each. Run from anywhere; needs protoc and python3-protobuf (the
Envelope is compiled from proto/physd.proto into a temporary directory).
"""
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "frames")

tmp = tempfile.mkdtemp()
subprocess.check_call(["protoc", "--proto_path=" + os.path.join(ROOT, "proto"),
                       "--python_out=" + tmp, os.path.join(ROOT, "proto", "physd.proto")])
sys.path.insert(0, tmp)
import physd_pb2 as pb  # noqa: E402

MJCF = open(os.path.join(ROOT, "tests", "fuzz", "corpus", "mjcf", "features.xml"), "rb").read()
URDF = open(os.path.join(ROOT, "tests", "data", "urdf", "arm2.urdf"), "rb").read()


def env(req_id, **kw):
    e = pb.Envelope(req_id=req_id)
    for k, v in kw.items():
        getattr(e, k).CopyFrom(v)
    return e


def frames(envs):
    out = b"PHYS" + struct.pack("<HH", 1, 6)
    for e in envs:
        b = e.SerializeToString()
        out += struct.pack("<I", len(b)) + b
    return out


def vec(x, y, z):
    return pb.Vec3(x=x, y=y, z=z)


seeds = {
    "step_state": [env(1, step=pb.Step(n=3)), env(2, get_state=pb.GetState()),
                   env(3, get_model_info=pb.GetModelInfo()), env(4, get_stats=pb.GetStats())],
    "load_mjcf": [env(1, load_world=pb.LoadWorld(data=MJCF, name="features.xml")),
                  env(2, step_and_observe=pb.StepAndObserve(n=2)),
                  env(3, reset_to_keyframe=pb.ResetToKeyframe(name="home")),
                  env(4, set_actuator_control=pb.SetActuatorControl(ids=[0, 1], ctrl=[0.5, 0.1])),
                  env(5, step=pb.Step(n=2))],
    "load_urdf": [env(1, load_world=pb.LoadWorld(data=URDF, name="arm2.urdf", format=2,
                                                  floating_base=True, ground_plane=True)),
                  env(2, set_joint_command=pb.SetJointCommand(joint_ids=[1], mode=3, q=[0.3],
                                                              kp=[10], kd=[1])),
                  env(3, set_joint_state=pb.SetJointState(joint_ids=[1], qpos=[0.2])),
                  env(4, step=pb.Step(n=2))],
    "bodies": [env(1, add_body=pb.AddBody(name="b", pos=vec(0, 0, 1), mass=1,
                                          geoms=[pb.GeomSpec(type=pb.GEOM_SPHERE, size=[0.1])])),
               env(2, set_body_state=pb.SetBodyState(id=1, linvel=vec(1, 0, 0))),
               env(3, apply_wrench=pb.ApplyWrench(body=1, force=vec(0, 0, 5))),
               env(4, step=pb.Step(n=1)), env(5, remove_body=pb.RemoveBody(id=1))],
    "snapshot": [env(1, step=pb.Step(n=2)), env(2, snapshot=pb.Snapshot()),
                 env(3, reset=pb.Reset()), env(4, restore=pb.Restore(data=b"PYST" + bytes(60)))],
    "solver": [env(1, set_solver=pb.SetSolver(name="pgs", max_iterations=20,
                                              has_max_iterations=True)),
               env(2, set_mode=pb.SetMode(mode=1)), env(3, join_barrier=pb.JoinBarrier(order=1)),
               env(4, step=pb.Step(n=1)), env(5, leave_barrier=pb.LeaveBarrier()),
               env(6, pause=pb.Pause()), env(7, resume=pb.Resume())],
}

os.makedirs(OUT, exist_ok=True)
for name, envs in seeds.items():
    for chunk in (255, 6):
        with open(os.path.join(OUT, "%s_c%d.bin" % (name, chunk + 1)), "wb") as f:
            f.write(bytes([chunk]) + frames(envs))
print("wrote %d seeds to %s" % (2 * len(seeds), OUT))
