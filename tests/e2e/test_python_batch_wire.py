#!/usr/bin/python3
"""test_python_batch_wire.py - Client.step_batch's own wire path (physd_client/_batch_wire.py)
against protobuf, through a scripted server on a socket pair (no physd needed):

* encode: the request the client sends, parsed by protobuf's ParseFromString, equals the
  Envelope built field by field with protobuf (ctrl as a list, ints, a numpy (worlds, nu)
  array of float64 / float32, empty, None, non-finite values passed through bit for bit;
  subset worlds, resets with keyframes, n, no_step, every selector flag);
* decode: the result equals protobuf's parse of the same reply bytes, field by field and bit
  for bit (random frames with all four arrays, empty arrays, the message string, unknown
  fields in the BatchFrame and in the Envelope, a double array sent unpacked or in two pieces),
  and its attribute names are exactly the BatchFrame's fields;
* an Error reply raises ServerError with its code and message, an unexpected reply
  PhysdError; the connection stays usable;
* framing: a reply over 64 KiB, one dribbled a few bytes at a time, an event and the reply in
  one write, a late reply after a Timeout (discarded), the frame-size limit (ProtocolError
  before the frame is read), and the reader-thread mode (after subscribe) all give the same;
* all of it again without numpy (array.array('d') results), in a child process.

Env as test_python_client.py (PHYSD_PB2_DIR, PYTHONPATH). Exits 77 (skip) when physd_pb2 cannot
be loaded.
"""
import array
import math
import os
import pickle
import random
import socket
import struct
import subprocess
import sys
import threading
import unittest

NO_NUMPY = os.environ.get("PHYSD_TEST_NO_NUMPY") == "1"
if NO_NUMPY:
    sys.modules["numpy"] = None  # import numpy now raises ImportError
    np = None
else:
    try:
        import numpy as np
    except ImportError:
        np = None

import physd_client as pc  # noqa: E402
from physd_client import _batch_wire  # noqa: E402

try:
    PB = pc.load_proto()
except ImportError as e:
    print("physd_pb2 cannot be loaded (%s): skipping" % e)
    sys.exit(77)

DOUBLES = ("qpos", "qvel", "actuator_force", "sensor_values")


def frame_bytes(body):
    return struct.pack("<I", len(body)) + body


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def read_request(sock):
    (n,) = struct.unpack("<I", recv_exact(sock, 4))
    return recv_exact(sock, n)


class FakeServer:
    """The server end of a socket pair: the handshake, then one scripted reply per request.
    script(request Envelope) -> list of reply Envelope bodies (bytes) and sends, each a bytes
    (written whole) or a ("dribble", bytes) (its first and last 300 bytes written 3 at a
    time)."""

    def __init__(self, script, max_frame=1 << 24):
        self.script = script
        self.requests = []  # the request bodies, as received
        self.client_sock, self.sock = socket.socketpair()
        self.welcome = PB.Envelope()
        self.welcome.welcome.major, self.welcome.welcome.minor = pc.PROTO_MAJOR, pc.PROTO_MINOR
        self.welcome.welcome.limits.max_frame_bytes = max_frame
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            recv_exact(self.sock, 8)  # the preamble
            hello = PB.Envelope()
            hello.ParseFromString(read_request(self.sock))
            self.welcome.req_id = hello.req_id
            self.sock.sendall(b"PHYS" + struct.pack("<HH", pc.PROTO_MAJOR, pc.PROTO_MINOR)
                              + frame_bytes(self.welcome.SerializeToString()))
            while True:
                body = read_request(self.sock)
                self.requests.append(body)
                env = PB.Envelope()
                env.ParseFromString(body)
                for out in self.script(env):
                    if isinstance(out, tuple):  # its first and last 300 bytes dribbled
                        data = out[1]
                        cuts = list(range(0, min(300, len(data)), 3))
                        cuts += list(range(max(cuts[-1] + 3, len(data) - 300), len(data), 3))
                        for a, b in zip(cuts, cuts[1:] + [len(data)]):
                            self.sock.sendall(data[a:b])
                    else:
                        self.sock.sendall(out)
        except (EOFError, OSError):
            pass

    def client(self, timeout=10.0):
        return pc.Client(self.client_sock, name="wire_test", timeout=timeout)

    def close(self):
        self.sock.close()
        self.thread.join(5)


def random_frame(rng, worlds, nq, nv, nu, ns, message=""):
    f = PB.BatchFrame()
    f.worlds.extend(rng.sample(range(10 * worlds + 1), worlds))
    f.step.extend(rng.randrange(1 << 64) for _ in range(worlds))
    f.sim_time_ns.extend(rng.randrange(1 << 63) for _ in range(worlds))
    f.status.extend(rng.choice((0, 0, 7)) for _ in range(worlds))
    f.nq, f.nv = nq, nv
    for name, per in zip(DOUBLES, (nq, nv, nu, ns)):
        getattr(f, name).extend(rng.uniform(-1e3, 1e3) for _ in range(worlds * per))
    f.message = message
    return f


def reply_env(req_id, frame):
    env = PB.Envelope(req_id=req_id)
    env.batch_frame.CopyFrom(frame)
    return env.SerializeToString()


def doubles_bytes(values):
    a = array.array("d", values)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


def result_doubles_bytes(values):
    if np is not None:
        assert isinstance(values, np.ndarray) and values.dtype == np.float64, type(values)
        return values.astype("<f8").tobytes()
    assert isinstance(values, array.array) and values.typecode == "d", type(values)
    return doubles_bytes(values)


class WireTest(unittest.TestCase):
    def setUp(self):
        self.rng = random.Random(16)
        self.frames = []  # reply bodies to send, in order; None: echo a random frame
        self.server = None

    def tearDown(self):
        if self.server is not None:
            self.c.close()  # the server thread then reads end of file
            self.server.close()

    def start(self, script=None, **kw):
        self.server = FakeServer(script or self.answer_with(self.next_reply), **kw)
        self.c = self.server.client()
        return self.c

    @staticmethod
    def answer_with(fn):
        return lambda env: [frame_bytes(fn(env))]

    def next_reply(self, env):
        body = self.frames.pop(0)
        return body(env.req_id) if callable(body) else body

    def assert_result_equals(self, res, body):
        """res equals protobuf's parse of the Envelope body, field by field, bit for bit"""
        ref = PB.Envelope()
        ref.ParseFromString(body)
        f = ref.batch_frame
        self.assertIsInstance(res, _batch_wire.BatchResult)
        for name in ("worlds", "step", "sim_time_ns", "status"):
            self.assertEqual(list(getattr(res, name)), list(getattr(f, name)), name)
        self.assertEqual((res.nq, res.nv, res.message), (f.nq, f.nv, f.message))
        for name in DOUBLES:
            self.assertEqual(result_doubles_bytes(getattr(res, name)),
                             doubles_bytes(getattr(f, name)), name)
            self.assertEqual(len(getattr(res, name)), len(getattr(f, name)), name)

    # ---- encode ------------------------------------------------------------------------------

    def check_request(self, ctrl_expected, **kw):
        """step_batch(**kw) sends what protobuf builds from the same arguments"""
        self.frames.append(lambda rid: reply_env(rid, PB.BatchFrame()))
        self.c.step_batch(**kw)
        got = PB.Envelope()
        got.ParseFromString(self.server.requests[-1])
        ref = PB.Envelope(req_id=got.req_id)
        m = ref.step_batch
        m.SetInParent()
        m.worlds.extend(kw.get("worlds", ()))
        m.reset.extend(kw.get("reset", ()))
        m.reset_keyframe.extend(kw.get("reset_keyframe", ()))
        m.n = kw.get("n", 1)
        m.no_step = kw.get("no_step", False)
        for flag in ("qpos", "qvel", "actuator_force"):
            setattr(m.selector, flag, kw.get(flag, False))
        m.selector.sensors = kw.get("sensors", False)
        m.ctrl.extend(ctrl_expected)
        self.assertEqual(got.WhichOneof("msg"), "step_batch")
        self.assertGreater(got.req_id, 0)
        # bit for bit (NaN included), then every other field through protobuf's equality
        self.assertEqual(doubles_bytes(got.step_batch.ctrl), doubles_bytes(m.ctrl))
        got.step_batch.ClearField("ctrl")
        m.ClearField("ctrl")
        self.assertEqual(got, ref)

    def test_encode_equals_protobuf(self):
        self.start()
        ctrl = [self.rng.uniform(-1, 1) for _ in range(12)]
        self.check_request(ctrl, ctrl=ctrl, qpos=True, qvel=True)
        self.check_request([1.0, -2.0, 3.0], ctrl=[1, -2, 3], actuator_force=True, sensors=True)
        self.check_request(ctrl, ctrl=tuple(ctrl), worlds=[3, 1, 2], n=4)
        self.check_request(ctrl, ctrl=(v for v in ctrl), reset=[0, 5],
                           reset_keyframe=["up", ""], no_step=True)
        self.check_request([], ctrl=[], reset=[2])
        self.check_request([], ctrl=None, worlds=[0])
        self.check_request([], n=0, qpos=True)
        bad = [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308]
        self.check_request(bad, ctrl=bad)  # sent as they are: the server refuses them
        self.check_request(ctrl, ctrl=array.array("d", ctrl))
        with self.assertRaises(TypeError):
            self.c.step_batch(ctrl=["0.5"])
        with self.assertRaises(TypeError):
            self.c.step_batch(ctrl=b"\0" * 8)

    @unittest.skipIf(np is None, "numpy is missing")
    def test_encode_numpy_equals_protobuf(self):
        self.start()
        a = np.array([[self.rng.uniform(-1, 1) for _ in range(3)] for _ in range(4)])
        self.check_request(a.ravel().tolist(), ctrl=a, qpos=True)
        self.check_request(a.T.ravel().tolist(), ctrl=a.T)  # not contiguous: C order
        a32 = a.astype(np.float32)
        self.check_request(a32.ravel().tolist(), ctrl=a32)
        self.check_request([1.0, 0.0, 2.0], ctrl=np.array([1, 0, 2], dtype=np.int64))
        self.check_request([], ctrl=np.zeros((0, 3)))
        self.check_request([math.nan, 1.0], ctrl=np.array([math.nan, 1.0]))
        big = a.astype(">f8")  # another byte order
        self.check_request(a.ravel().tolist(), ctrl=big)
        with self.assertRaises(TypeError):
            self.c.step_batch(ctrl=np.array(["0.5"]))
        with self.assertRaises(TypeError):
            self.c.step_batch(ctrl=np.array([1 + 2j]))

    # ---- decode ------------------------------------------------------------------------------

    def roundtrip(self, make_body):
        """the result of a step_batch answered with make_body(req_id), and that body"""
        bodies = []

        def reply(rid):
            bodies.append(make_body(rid))
            return bodies[-1]
        self.frames.append(reply)
        res = self.c.step_batch(qpos=True)
        return res, bodies[-1]

    def test_decode_equals_protobuf(self):
        self.start()
        cases = [(8, 9, 8, 2, 5, ""), (3, 0, 0, 0, 0, ""), (0, 0, 0, 0, 0, ""),
                 (5, 7, 0, 3, 0, "world 2: step failed: non-finite qacc \u2013 restored"),
                 (1, 28, 27, 21, 40, "x" * 300)]
        for args in cases:
            frame = random_frame(self.rng, *args)
            res, body = self.roundtrip(lambda rid: reply_env(rid, frame))
            self.assert_result_equals(res, body)
        res, body = self.roundtrip(lambda rid: reply_env(rid, PB.BatchFrame()))
        self.assert_result_equals(res, body)
        for name in DOUBLES:
            self.assertEqual(len(getattr(res, name)), 0)

    def test_decode_unusual_shapes(self):
        """unknown fields, a double array unpacked or in two pieces: still protobuf's values"""
        self.start()
        frame = random_frame(self.rng, 4, 3, 2, 1, 2, "m")
        fb = frame.SerializeToString()
        unknown = (_batch_wire.varint(50 << 3 | 0) + _batch_wire.varint(12345)
                   + _batch_wire.varint(51 << 3 | 2) + _batch_wire.varint(3) + b"abc"
                   + _batch_wire.varint(52 << 3 | 1) + b"\1" * 8
                   + _batch_wire.varint(53 << 3 | 5) + b"\2" * 4)
        bf = PB.Envelope.DESCRIPTOR.fields_by_name["batch_frame"].number
        qpos = PB.BatchFrame.DESCRIPTOR.fields_by_name["qpos"].number

        def env_with(frame_body, extra=b""):
            return lambda rid: (_batch_wire.varint(1 << 3) + _batch_wire.varint(rid) + extra
                                + _batch_wire.varint(bf << 3 | 2)
                                + _batch_wire.varint(len(frame_body)) + frame_body)
        extra_qpos = [0.25, -7.5]
        unpacked = b"".join(_batch_wire.varint(qpos << 3 | 1) + doubles_bytes([v])
                            for v in extra_qpos)
        pieces = (_batch_wire.varint(qpos << 3 | 2) + _batch_wire.varint(16)
                  + doubles_bytes(extra_qpos))
        for make in (env_with(unknown + fb + unknown),       # unknown BatchFrame fields
                     env_with(fb, extra=unknown),             # unknown Envelope fields
                     env_with(fb + unpacked),                  # qpos continued unpacked
                     env_with(fb + pieces)):                   # qpos in two packed pieces
            res, body = self.roundtrip(make)
            self.assert_result_equals(res, body)
        self.assertEqual(list(res.qpos[-2:]), extra_qpos)

    def test_result_names_are_the_batch_frames(self):
        names = {n for n in dir(_batch_wire.BatchResult) if not n.startswith("_")}
        self.assertEqual(names, set(PB.BatchFrame.DESCRIPTOR.fields_by_name))

    @unittest.skipIf(np is None, "numpy is missing")
    def test_arrays_are_float64_and_owned(self):
        self.start()
        frame = random_frame(self.rng, 4, 3, 2, 1, 2)
        res, _ = self.roundtrip(lambda rid: reply_env(rid, frame))
        res2, _ = self.roundtrip(lambda rid: reply_env(rid, frame))
        again = pickle.loads(pickle.dumps(res))  # a result travels (multiprocessing, dask)
        self.assertEqual((again.worlds, again.step, again.status, again.message),
                         (res.worlds, res.step, res.status, res.message))
        self.assertEqual((type(res.step), type(res.step[0])), (list, int))
        np.testing.assert_array_equal(again.qvel, res.qvel)
        keep = res.qpos.copy()
        res2.qpos[:] = 0  # another result's arrays are its own
        np.testing.assert_array_equal(res.qpos, keep)
        self.assertEqual(res.qpos.reshape(4, 3).shape, (4, 3))

    # ---- errors ------------------------------------------------------------------------------

    def test_error_reply_raises_server_error(self):
        self.start()

        def error(rid):
            env = PB.Envelope(req_id=rid)
            env.error.code = 1
            env.error.message = "StepBatch.ctrl: 3 values, expected 8"
            return env.SerializeToString()
        self.frames.append(error)
        with self.assertRaises(pc.ServerError) as cm:
            self.c.step_batch(ctrl=[0.0] * 3)
        self.assertEqual((cm.exception.code, cm.exception.code_name), (1, "INVALID_ARGUMENT"))
        self.assertIn("StepBatch.ctrl", str(cm.exception))
        self.frames.append(lambda rid: PB.Envelope(req_id=rid, pong=PB.Pong()).SerializeToString())
        with self.assertRaises(pc.PhysdError) as cm:
            self.c.step_batch()
        self.assertIn("unexpected reply pong", str(cm.exception))
        frame = random_frame(self.rng, 2, 1, 1, 0, 0)
        res, body = self.roundtrip(lambda rid: reply_env(rid, frame))  # still usable
        self.assert_result_equals(res, body)

    # ---- framing -----------------------------------------------------------------------------

    def test_framing(self):
        frame = random_frame(self.rng, 256, 28, 27, 0, 0)  # ~115 KB, as 256 humanoids
        sent = []

        def script(env):
            body = reply_env(env.req_id, frame)
            sent.append(body)
            kind = len(sent) % 3
            if kind == 1:  # an event (an Error with req_id 0) and the reply in one write
                ev = PB.Envelope()
                ev.error.code = 5
                ev.error.message = "an event"
                return [frame_bytes(ev.SerializeToString()) + frame_bytes(body)]
            if kind == 2:
                return [("dribble", frame_bytes(body))]
            return [frame_bytes(body)[:5], frame_bytes(body)[5:]]
        self.start(script)
        self.assertGreater(len(reply_env(1, frame)), 1 << 16)
        for _ in range(6):
            res = self.c.step_batch(qpos=True, qvel=True)
            self.assert_result_equals(res, sent[-1])

    def test_late_reply_after_timeout_is_discarded(self):
        """the first reply stops half way (> 64 KiB frame) past the timeout; its rest comes
        with the second reply"""
        gate = threading.Event()
        frames = [random_frame(self.rng, 256, 28, 27, 0, 0) for _ in range(2)]
        late = frame_bytes(reply_env(2, frames[0]))

        def script(env):
            if env.req_id == 2:  # the first step_batch
                self.server.sock.sendall(late[:len(late) // 2])
                gate.wait(10)
                return []
            return [late[len(late) // 2:], frame_bytes(reply_env(env.req_id, frames[1]))]
        self.server = FakeServer(script)
        self.c = pc.Client(self.server.client_sock, timeout=0.3)
        with self.assertRaises(pc.Timeout):
            self.c.step_batch()
        gate.set()
        self.c.timeout = 10
        res = self.c.step_batch()
        self.assert_result_equals(res, reply_env(3, frames[1]))

    def test_undecodable_reply_breaks_the_connection(self):
        bf = PB.Envelope.DESCRIPTOR.fields_by_name["batch_frame"].number
        message = PB.BatchFrame.DESCRIPTOR.fields_by_name["message"].number
        bad_utf8 = _batch_wire.varint(message << 3 | 2) + b"\x02\xff\xfe"
        self.frames.append(lambda rid: (_batch_wire.varint(1 << 3) + _batch_wire.varint(rid)
                                        + _batch_wire.varint(bf << 3 | 2)
                                        + _batch_wire.varint(len(bad_utf8)) + bad_utf8))
        self.start()
        with self.assertRaises(pc.ProtocolError):
            self.c.step_batch()
        with self.assertRaises(pc.ConnectionClosed):
            self.c.step_batch()

    def test_frame_limit(self):
        self.start(lambda env: [struct.pack("<I", 1 << 20) + b"\0" * 16], max_frame=1 << 16)
        with self.assertRaises(pc.ProtocolError) as cm:
            self.c.step_batch()
        self.assertIn("exceeds the limit", str(cm.exception))
        with self.assertRaises(pc.ConnectionClosed):
            self.c.step_batch()

    def test_reader_thread_mode(self):
        frame = random_frame(self.rng, 64, 28, 27, 21, 0)
        calls = []

        def script(env):
            kind = env.WhichOneof("msg")
            if kind == "subscribe":
                r = PB.Envelope(req_id=env.req_id)
                r.subscribed.subscription_id = 9
                ev = PB.Envelope()
                ev.state.subscription_id = 9
                return [frame_bytes(r.SerializeToString()), frame_bytes(ev.SerializeToString())]
            ev = PB.Envelope()
            ev.state.subscription_id = 9
            return [frame_bytes(ev.SerializeToString()),
                    ("dribble", frame_bytes(reply_env(env.req_id, frame)))]
        self.start(script)
        self.c.subscribe(lambda st: calls.append(st.subscription_id))
        for _ in range(3):
            res = self.c.step_batch(qpos=True)
            self.assert_result_equals(res, reply_env(0, frame))
        self.assertGreaterEqual(len(calls), 3)
        self.assertEqual(set(calls), {9})

    # ---- without numpy -----------------------------------------------------------------------

    @unittest.skipIf(NO_NUMPY, "already the child")
    def test_without_numpy(self):
        r = subprocess.run([sys.executable, os.path.abspath(__file__)], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, PHYSD_TEST_NO_NUMPY="1"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("OK", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
