#!/usr/bin/python3
"""make_session_seeds.py - write the seeds of fuzz/fuzz_session.c into tests/fuzz/corpus/session/.

Each seed is one byte (the read chunk size - 1), one byte of switches (fuzz_session.c: 1 TCP
with the token "fuzz-token", 2 pump after every read, 4 max_frame_bytes 1024 + 1024 * (byte >> 5),
8 small limits,
16 a client that reads nothing until the end), the client preamble ("PHYS", u16 major, u16
minor, little-endian), then [u32 LE length][Envelope] frames: a session's worth of Hello, Ping,
Subscribe and Unsubscribe with simulation-thread requests between them. Run from anywhere;
needs protoc and python3-protobuf (the Envelope is compiled from proto/physd.proto into a
temporary directory).
"""
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "session")

tmp = tempfile.mkdtemp()
subprocess.check_call(["protoc", "--proto_path=" + os.path.join(ROOT, "proto"),
                       "--python_out=" + tmp, os.path.join(ROOT, "proto", "physd.proto")])
sys.path.insert(0, tmp)
import physd_pb2 as pb  # noqa: E402


def env(req_id, **kw):
    e = pb.Envelope(req_id=req_id)
    for k, v in kw.items():
        getattr(e, k).CopyFrom(v)
    return e


def frames(envs, preamble=b"PHYS" + struct.pack("<HH", 1, 7)):
    out = preamble
    for e in envs:
        b = e.SerializeToString()
        out += struct.pack("<I", len(b)) + b
    return out


def hello(req_id=1, token=""):
    return env(req_id, hello=pb.Hello(major=1, minor=7, client_name="seed", auth_token=token))


ALL = pb.Selector(all_bodies=True, contacts=True, stats=True, all_joints=True, actuators=True,
                  sensors=True)

BODIES = pb.Selector(all_bodies=True)

# name: (switches, frames)
seeds = {
    "ping": (0, frames([hello(), env(2, ping=pb.Ping(client_time_ns=5)), env(3, ping=pb.Ping())])),
    "subscribe_step": (2, frames([
        hello(), env(2, subscribe=pb.Subscribe(selector=ALL)),
        env(3, subscribe=pb.Subscribe(selector=pb.Selector(bodies=[1], joints=[1]),
                                      period_ns=2000000)),
        env(4, step=pb.Step(n=3)), env(5, unsubscribe=pb.Unsubscribe(subscription_id=1)),
        env(6, step=pb.Step(n=2)), env(7, unsubscribe=pb.Unsubscribe(subscription_id=9))])),
    "max_speed": (2, frames([
        hello(), env(2, subscribe=pb.Subscribe(selector=pb.Selector(all_bodies=True))),
        env(3, set_mode=pb.SetMode(mode=pb.MODE_MAX_SPEED)), env(4, ping=pb.Ping()),
        env(5, get_stats=pb.GetStats()), env(6, pause=pb.Pause())])),
    "barrier": (2, frames([
        hello(), env(2, set_mode=pb.SetMode(mode=pb.MODE_BARRIER)),
        env(3, join_barrier=pb.JoinBarrier(order=1)),
        env(4, subscribe=pb.Subscribe(selector=pb.Selector(all_bodies=True, contacts=True))),
        env(5, step=pb.Step(n=1)), env(6, leave_barrier=pb.LeaveBarrier())])),
    "token": (1, frames([hello(token="fuzz-token"), env(2, ping=pb.Ping()),
                         env(3, get_state=pb.GetState())])),
    "bad_token": (1, frames([hello(token="wrong"), env(2, ping=pb.Ping())])),
    "small_frames": (4 | 2 | 3 << 5, frames([
        hello(), env(2, subscribe=pb.Subscribe(selector=ALL)),
        env(3, subscribe=pb.Subscribe(selector=pb.Selector(all_bodies=True))),
        env(4, step=pb.Step(n=2)), env(5, get_state=pb.GetState())])),
    "small_limits": (8 | 16, frames([hello()] + [env(i, ping=pb.Ping()) for i in range(2, 8)] +
                                    [env(8, step=pb.Step(n=1)), env(9, step=pb.Step(n=1)),
                                     env(10, step=pb.Step(n=1))] +
                                    [env(11 + i, subscribe=pb.Subscribe(selector=BODIES))
                                     for i in range(3)])),
    "tiny_frames": (4 | 2, frames([hello(), env(2, subscribe=pb.Subscribe(selector=ALL)),
                                   env(3, get_model_info=pb.GetModelInfo())])),
    "no_hello": (0, frames([env(1, ping=pb.Ping())])),
    "twice_hello": (0, frames([hello(), hello(2), env(0, ping=pb.Ping()), env(3, pong=pb.Pong()),
                               pb.Envelope(req_id=4)])),
    "bad_major": (0, frames([hello()], preamble=b"PHYS" + struct.pack("<HH", 9, 0))),
}

os.makedirs(OUT, exist_ok=True)
for name, (switches, data) in seeds.items():
    for chunk in (255, 6):
        with open(os.path.join(OUT, "%s_c%d.bin" % (name, chunk + 1)), "wb") as f:
            f.write(bytes([chunk, switches]) + data)
print("wrote %d seeds to %s" % (2 * len(seeds), OUT))
