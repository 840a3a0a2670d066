#!/usr/bin/python3
"""test_python_client.py - the Python client (physd_client) against the real physd: handshake,
a bad preamble, every call's success and error path, lock-step determinism, snapshot/restore,
subscriptions, and both examples run briefly.

Env (set by meson): PHYSD_BIN, PHYSD_PB2_DIR (generated physd_pb2.py), PYTHONPATH (the
package), PHYSD_SOURCE_ROOT. Exits 77 (skip) when the daemon is not built.
"""
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

PHYSD_BIN = os.environ.get("PHYSD_BIN", "")
if not os.access(PHYSD_BIN, os.X_OK):
    print("PHYSD_BIN is not an executable physd: skipping")
    sys.exit(77)

import physd_client as pc  # noqa: E402

WORLD = """<mujoco model="py">
  <option timestep="0.001"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="ball" pos="0.5 0 0.6"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body name="box2" pos="-0.5 0 0.4"><freejoint/><geom type="box" size="0.05 0.1 0.05"/></body>
  </worldbody>
</mujoco>
"""
NBODIES = 3
SRC = os.environ.get("PHYSD_SOURCE_ROOT",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLES = os.path.join(SRC, "clients", "python", "examples")


class Daemon:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="physd-py-")
        self.sock = os.path.join(self.dir, "physd.sock")
        self.world = os.path.join(self.dir, "world.xml")
        with open(self.world, "w") as f:
            f.write(WORLD)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.log = open(os.path.join(self.dir, "physd.log"), "w+")
        self.proc = subprocess.Popen(
            [PHYSD_BIN, "--socket", self.sock, "--tcp", str(self.port), "--world", self.world,
             "--allowed-root", self.dir, "--threads", "1"], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("physd exited: " + self.read_log())
            if "listening" in self.read_log() and os.path.exists(self.sock):
                return
            time.sleep(0.02)
        self.proc.kill()
        raise RuntimeError("physd did not start: " + self.read_log())

    def read_log(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = -9
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


D = None


def setUpModule():
    global D
    D = Daemon()


def tearDownModule():
    rc = D.stop()
    if rc != 0:
        raise RuntimeError("physd exited with %d after SIGTERM" % rc)


class Base(unittest.TestCase):
    def setUp(self):
        self.c = pc.Client.connect_unix(D.sock, name="pytest", timeout=20)
        self.c.load_world(path=D.world)
        self.c.set_mode(pc.MODE_LOCKSTEP)

    def tearDown(self):
        self.c.close()

    def assertServerError(self, code, fn, *a, **kw):
        with self.assertRaises(pc.ServerError) as cm:
            fn(*a, **kw)
        self.assertEqual(cm.exception.code, code, cm.exception.message)

    def body_id(self, name):
        return next(b.id for b in self.c.model_info().bodies if b.name == name)


class Session(Base):
    def test_handshake(self):
        w = self.c.welcome
        self.assertEqual(w.major, 1)
        self.assertTrue(w.server_version)
        self.assertGreater(w.limits.max_frame_bytes, 0)
        rtt, pong = self.c.ping()
        self.assertGreater(rtt, 0)
        self.assertGreater(pong.server_time_ns, 0)
        with pc.Client.connect_tcp("127.0.0.1", D.port, name="pytcp") as t:
            t.ping()

    def test_solver_options(self):
        """Protocol 1.6: options listed in Welcome, set by set_solver / load_world, refused by
        name with nothing changed."""
        opts = {o.name: o for o in self.c.solver_options("canal")}
        self.assertEqual(opts["canal.beta_scale"].default_value, 30.0)
        self.assertEqual(opts["canal.beta_scale"].range, "[0, inf)")
        r = self.c.set_solver("canal", options={"canal.beta_scale": 12, "canal.newton_max": 3})
        got = {o.name: o.value for o in r.options}
        self.assertEqual((r.name, got["canal.beta_scale"], got["canal.newton_max"]),
                         ("canal", 12.0, 3.0))
        with self.assertRaises(pc.ServerError) as cm:
            self.c.set_solver(options={"canal.beta_scale": 5, "canal.zeta": 1.0})
        self.assertEqual(cm.exception.code, 1, cm.exception.message)
        self.assertIn("canal.zeta", cm.exception.message)
        got = {o.name: o.value for o in self.c.get_stats().solver.options}
        self.assertEqual(got["canal.beta_scale"], 12.0)
        self.c.load_world(path=D.world, solver="pgs", solver_options={"pgs.relaxation": 1.5})
        mi = self.c.model_info()
        self.assertEqual([(o.name, o.value) for o in mi.solver.options], [("pgs.relaxation", 1.5), ("pgs.dense_rows", 48.0)])

    def test_solvers(self):
        """Protocol 1.2: the solver list, SetSolver, LoadWorld's choice, refusals."""
        self.assertEqual(pc.PROTO_MINOR, 9)
        self.assertEqual(self.c.welcome.minor, 9)  # the server speaks 1.9
        names = [n for n, _ in self.c.solvers()]
        self.assertEqual(names[0], "subadmm")
        self.assertGreaterEqual(len(names), 3)
        self.assertTrue(all(s for _, s in self.c.solvers()))
        other = names[-1]
        r = self.c.set_solver(other, max_iterations=33, tolerance=0.0)
        self.assertEqual((r.name, r.max_iterations, r.tolerance), (other, 33, 0.0))
        self.c.step(2)
        st = self.c.get_stats()
        self.assertEqual(st.solver.name, other)
        self.assertEqual(st.last_step.solver, other)
        self.assertEqual(self.c.model_info().solver.name, other)
        before = self.c.get_state()
        for kw, says in (({"name": "warp"}, "known solvers"),
                         ({"max_iterations": 0}, "max_iterations"),
                         ({"tolerance": -1.0}, "tolerance"),
                         ({"tolerance": float("nan")}, "tolerance")):
            with self.assertRaises(pc.ServerError) as cm:
                self.c.set_solver(**kw)
            self.assertEqual(cm.exception.code, 1, cm.exception.message)
            self.assertIn(says, cm.exception.message)
        # nothing changed: the solver and the state, bit for bit
        st2 = self.c.get_stats()
        self.assertEqual((st2.solver.name, st2.solver.max_iterations, st2.solver.tolerance),
                         (other, 33, 0.0))
        after = self.c.get_state()
        self.assertEqual(after.step, before.step)
        self.assertEqual([b.SerializeToString() for b in after.bodies],
                         [b.SerializeToString() for b in before.bodies])
        self.c.load_world(path=D.world, solver=names[1], max_iterations=12)
        mi = self.c.model_info()
        self.assertEqual((mi.solver.name, mi.solver.max_iterations), (names[1], 12))
        with self.assertRaises(pc.ServerError) as cm:
            self.c.load_world(path=D.world, solver="warp")
        self.assertIn("known solvers", cm.exception.message)
        self.assertEqual(self.c.model_info().solver.name, names[1])

    def test_bad_preamble(self):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(3)
        s.connect(D.sock)
        s.sendall(b"PHYS" + struct.pack("<HH", 99, 0))
        data = b""
        while True:
            chunk = s.recv(4096)   # the server closes (a timeout here fails the test)
            if not chunk:
                break
            data += chunk
        s.close()
        if len(data) >= 8:
            self.assertEqual(data[:4], b"PHYS")
        self.c.ping()   # still serving

    def test_connect_errors(self):
        with self.assertRaises(pc.ConnectionClosed):
            pc.Client.connect_unix(os.path.join(D.dir, "none.sock"))


class World(Base):
    def test_load_and_info(self):
        wl = self.c.load_world(data=WORLD, name="inline")
        self.assertEqual(wl.bodies, NBODIES)
        info = self.c.model_info()
        self.assertEqual(sum(not b.is_static for b in info.bodies), NBODIES)
        self.assertEqual(info.model_hash, wl.model_hash)
        self.assertAlmostEqual(info.timestep, 0.001)
        self.assertServerError(2, self.c.load_world, path=os.path.join(D.dir, "missing.xml"))
        with self.assertRaises(pc.ServerError):
            self.c.load_world(path="/etc/passwd")
        self.assertServerError(1, self.c.load_world, data="<mujoco><worldbody><body>",
                               format=pc.FORMAT_MJCF)

    def test_entities(self):
        bid = self.c.add_body([{"type": pc.GEOM_SPHERE, "size": [0.1]}], pos=(2, 2, 1),
                              name="added")
        st = self.c.get_state(bodies=[bid])
        self.assertEqual(len(st.bodies), 1)
        self.assertAlmostEqual(st.bodies[0].pos.x, 2)
        self.c.set_body_state(bid, pos=(1, 2, 3), linvel=(0.5, 0, 0))
        b = self.c.get_state(bodies=[bid]).bodies[0]
        self.assertAlmostEqual(b.pos.z, 3)
        self.assertAlmostEqual(b.linvel.x, 0.5)
        self.assertServerError(2, self.c.set_body_state, 9999, pos=(0, 0, 0))
        self.assertServerError(1, self.c.set_body_state, bid, pos=(math.nan, 0, 0))
        self.assertServerError(1, self.c.add_body, [{"type": pc.GEOM_BOX, "size": [-1, 1, 1]}])
        self.c.remove_body(bid)
        self.assertServerError(2, self.c.remove_body, bid)
        self.assertServerError(2, self.c.set_joint_command, [0], tau=[1.0])


    def test_mocap(self):
        """Protocol 1.4: a mocap body is listed and posed by SetBodyState; a velocity is refused."""
        doc = ("<mujoco><worldbody><body name='plat' mocap='true'><geom type='box' "
               "size='0.5 0.5 0.05'/></body><body name='box' pos='0 0 0.15'><freejoint/>"
               "<geom type='box' size='0.1 0.1 0.1'/></body></worldbody></mujoco>")
        self.c.load_world(data=doc, name="mocap.xml")
        info = {b.name: b for b in self.c.model_info().bodies}
        self.assertTrue(info["plat"].is_mocap and info["plat"].is_static)
        self.assertFalse(info["box"].is_mocap)
        plat, box = info["plat"].id, info["box"].id
        for _ in range(100):
            self.c.step(1)
        # lift the platform by 0.1 mm a step: the box rides on it
        for k in range(1, 201):
            self.c.set_body_state(plat, pos=(0, 0, 1e-4 * k))
            self.c.step(1)
        st = self.c.get_state(bodies=[plat, box])
        self.assertEqual(st.bodies[0].pos.z, 1e-4 * 200)  # exactly as set
        self.assertAlmostEqual(st.bodies[1].pos.z, 0.17, delta=1e-3)
        self.assertServerError(1, self.c.set_body_state, plat, pos=(1, 0, 0), linvel=(0, 0, 1))
        self.assertEqual(self.c.get_state(bodies=[plat]).bodies[0].pos.x, 0.0)
        self.c.load_world(path=D.world)

    def test_joints_and_actuators(self):
        """Protocol 1.1: joint state, actuator controls by name and id, loader notices."""
        with open(os.path.join(SRC, "configs", "worlds", "arm_slider.xml")) as f:
            doc = f.read()
        doc = doc.replace('<geom type="plane" size="5 5 0.1"/>',
                          '<geom type="plane" size="5 5 0.1" solref="0.02 1"/>')
        wl = self.c.load_world(data=doc, name="arm_slider.xml")
        self.assertTrue(any("solref" in n for n in wl.notices), list(wl.notices))
        info = self.c.model_info()
        self.assertEqual([a.name for a in info.actuator_info], ["shoulder_motor"])
        shoulder = info.actuator_info[0].joint
        self.assertEqual(len(self.c.get_state().joints), 0)  # none unless asked
        self.c.set_actuator_control({"shoulder_motor": 0.5}, seq=7)
        f = self.c.step_and_observe(bodies=[], joints=None, actuator_forces=True)
        self.assertEqual(len(f.joints), 3)
        self.assertAlmostEqual(f.actuator_force[0], 0.5)
        self.assertEqual(f.last_cmd_seq, 7)
        f = self.c.step_and_observe(bodies=[], joints=[shoulder], actuators={0: -0.25},
                                    actuator_forces=True)
        self.assertEqual([j.id for j in f.joints], [shoulder])
        self.assertAlmostEqual(f.actuator_force[0], -0.25)
        self.assertServerError(2, self.c.set_actuator_control, {"nope": 1.0})
        self.assertServerError(1, self.c.set_actuator_control, {0: math.nan})
        self.assertServerError(2, self.c.get_state, joints=[9999])
        self.c.load_world(path=D.world)


    def test_robot_as_published(self):
        """Protocol 1.3: a menagerie-style scene by path and by bytes with base_dir, joints by
        their file names, a keyframe, joint state, and lock-step driving by actuator name."""
        bot = os.path.join(D.dir, "bot")
        if not os.path.isdir(bot):
            shutil.copytree(os.path.join(SRC, "tests", "data", "menagerie_bot"), bot)
        wl = self.c.load_world(path=os.path.join(bot, "scene.xml"))
        self.assertEqual(wl.bodies, 5)
        with open(os.path.join(bot, "scene.xml")) as f:
            doc = f.read()
        # bytes alone: the relative include cannot be found, and the message says what to do
        with self.assertRaises(pc.ServerError) as cm:
            self.c.load_world(data=doc, name="scene.xml")
        self.assertIn("without a base directory", cm.exception.message)
        self.assertEqual(self.c.load_world(data=doc, name="scene.xml", base_dir=bot).bodies, 5)
        info = self.c.model_info()
        self.assertEqual(list(info.keyframes), ["home"])
        # 1.8: the geometry, a published mesh among it with its hull
        self.assertEqual([g.id for g in info.geoms], list(range(len(info.geoms))))
        meshes = [g for g in info.geoms if g.type == pc.GEOM_MESH]
        self.assertGreaterEqual(len(meshes), 1)
        hull = info.meshes[meshes[0].mesh]
        self.assertGreaterEqual(len(hull.vertices), 3 * 4)
        self.assertEqual(len(hull.triangles) % 3, 0)
        self.assertTrue(all(0 <= t < len(hull.vertices) // 3 for t in hull.triangles))
        joints = {j.name: j for j in info.joints}
        self.assertEqual(joints["FR_knee_joint"].link, "FR_calf")
        self.assertEqual((joints[""].type, joints[""].nq, joints[""].nv), ("free", 7, 6))
        knee = joints["FR_knee_joint"].id
        self.c.reset_to_keyframe("home")
        f = self.c.get_state(bodies=[], joints=[knee])
        self.assertAlmostEqual(f.joints[0].qpos[0], -1.2, places=12)
        self.assertServerError(2, self.c.reset_to_keyframe, "crouch")
        # joint state by name, checked whole
        self.c.set_joint_state(["FR_knee_joint"], qpos=[-1.0], qvel=[0.5])
        f = self.c.get_state(bodies=[], joints=[knee])
        self.assertAlmostEqual(f.joints[0].qpos[0], -1.0, places=12)
        self.assertAlmostEqual(f.joints[0].qvel[0], 0.5, places=12)
        self.assertServerError(1, self.c.set_joint_state, ["FR_knee_joint"], qpos=[math.nan])
        self.assertServerError(1, self.c.set_joint_state, ["FR_knee_joint", "FR_knee_joint"],
                               qpos=[0, 0])
        f = self.c.get_state(bodies=[], joints=[knee])
        self.assertAlmostEqual(f.joints[0].qpos[0], -1.0, places=12)  # refusals changed nothing
        with self.assertRaises(ValueError):
            self.c.set_joint_state([knee, "FR_hip_joint"], qpos=[0, 0])
        # a floating base placed by SetBodyState; a leg link is refused, naming SetJointState
        trunk, thigh = self.body_id("trunk"), self.body_id("FR_thigh")
        self.c.set_body_state(trunk, pos=(0.1, 0.2, 0.6))
        f = self.c.get_state(bodies=[trunk])
        self.assertAlmostEqual(f.bodies[0].pos.z, 0.6, places=12)
        with self.assertRaises(pc.ServerError) as cm:
            self.c.set_body_state(thigh, pos=(0, 0, 1))
        self.assertIn("SetJointState", cm.exception.message)
        # a URDF floating base placed at load; refused for MJCF
        urdf = os.path.join(D.dir, "quadruped_lg.urdf")
        shutil.copy(os.path.join(SRC, "tests", "data", "urdf", "quadruped_lg.urdf"), urdf)
        self.c.load_world(path=urdf, floating_base=True, base_pos=(0.5, 0, 0.62),
                          base_quat=(1, 0, 0, 0))
        root = next(j.id for j in self.c.model_info().joints if j.type == "free")
        f = self.c.get_state(bodies=[root])
        self.assertAlmostEqual(f.bodies[0].pos.x, 0.5, places=9)
        with self.assertRaises(pc.ServerError) as cm:
            self.c.load_world(path=os.path.join(bot, "scene.xml"), base_pos=(0, 0, 1))
        self.assertIn("has_base_pose", cm.exception.message)
        self.c.load_world(path=os.path.join(bot, "scene.xml"))
        # drive in lock-step: the knee's position actuator pulls it to its target
        self.c.reset_to_keyframe("home")
        qs = []
        for _ in range(400):
            f = self.c.step_and_observe(bodies=[], joints=[knee], actuators={"FR_knee": -1.6})
            qs.append(f.joints[0].qpos[0])
        self.assertLess(max(abs(q + 1.6) for q in qs[-100:]), 0.05, qs[-100:][:5])
        self.c.load_world(path=D.world)


class Time(Base):
    def test_step_and_wrench(self):
        s0 = self.c.get_stats().clock.step
        self.c.step(10)
        self.assertEqual(self.c.get_stats().clock.step, s0 + 10)
        self.c.step(0)  # 0 is read as 1
        self.assertEqual(self.c.get_stats().clock.step, s0 + 11)
        ball = self.body_id("ball")
        a = self.c.step_and_observe(bodies=[ball])
        self.c.apply_wrench(ball, force=(0, 0, 1000))
        b = self.c.step_and_observe(bodies=[ball])
        self.assertGreater(b.bodies[0].linvel.z, a.bodies[0].linvel.z)
        c = self.c.step_and_observe(n=5, wrenches=[(ball, (0, 0, 1000), (0, 0, 0))],
                                    bodies=[ball])
        self.assertEqual(c.step, b.step + 5)
        self.assertServerError(2, self.c.apply_wrench, 9999, force=(1, 0, 0))
        self.assertServerError(1, self.c.apply_wrench, ball, force=(math.inf, 0, 0))
        f = self.c.step_and_observe(contacts=True, stats=True)
        self.assertEqual(len(f.bodies), NBODIES)
        self.assertGreater(len(f.contacts), 0)
        self.assertTrue(f.HasField("stats"))

    def test_modes(self):
        self.c.set_mode(pc.MODE_REALTIME, real_time_factor=1.0)
        self.assertServerError(3, self.c.step, 1)
        a = self.c.get_stats().clock.step
        time.sleep(0.1)
        self.assertGreater(self.c.get_stats().clock.step, a)
        self.c.pause()
        self.assertTrue(self.c.get_stats().clock.paused)
        self.c.resume()
        self.c.set_real_time_factor(2.0)
        self.assertAlmostEqual(self.c.get_stats().clock.real_time_factor, 2.0)
        self.assertServerError(1, self.c.set_real_time_factor, -1.0)
        self.c.set_mode(pc.MODE_BARRIER, barrier_deadline_ns=10**9,
                        deadline_policy=pc.DEADLINE_EVICT)
        self.c.join_barrier(0)
        self.c.step(1)
        self.c.leave_barrier()
        self.c.set_mode(pc.MODE_LOCKSTEP)

    def run_script(self):
        out = []
        for i in range(200):
            w = [(i % NBODIES, (math.sin(i * 0.1) * 20, math.cos(i * 0.07) * 20, 15),
                  (0, 0, 0.1 * math.sin(i * 0.3)))]
            f = self.c.step_and_observe(wrenches=w)
            out.append(b"".join(b.SerializeToString(deterministic=True) for b in f.bodies))
        return out

    def test_deterministic_and_snapshot(self):
        a = self.run_script()
        self.c.reset()
        self.assertEqual(self.c.get_stats().clock.step, 0)
        b = self.run_script()
        self.assertEqual(a, b)   # bit-identical body states
        snap = self.c.snapshot()
        self.assertIsInstance(snap, bytes)
        x = self.run_script()
        self.c.restore(snap)
        y = self.run_script()
        self.assertEqual(x, y)
        self.assertServerError(1, self.c.restore, b"\xa5" * 64)


class Streams(Base):
    def test_subscribe(self):
        frames = []
        got = threading.Event()

        def cb(f):
            frames.append((f.step, f.subscription_id, threading.current_thread().name))
            if len(frames) >= 5:
                got.set()

        period = max(10_000_000, self.c.welcome.limits.min_stream_period_ns)
        sid = self.c.subscribe(cb, period_ns=period)
        self.c.set_mode(pc.MODE_REALTIME, real_time_factor=1.0)
        self.assertTrue(got.wait(5), "fewer than 5 frames in 5 s")
        self.c.ping()   # requests work beside the reader thread
        self.c.unsubscribe(sid)
        n = len(frames)
        time.sleep(0.1)
        self.assertEqual(len(frames), n)
        steps = [f[0] for f in frames]
        self.assertEqual(steps, sorted(steps))
        self.assertTrue(all(f[1] == sid for f in frames))
        self.assertTrue(all(f[2] == "physd-reader" for f in frames))
        self.assertServerError(2, self.c.unsubscribe, sid)
        self.c.set_mode(pc.MODE_LOCKSTEP)

    def test_timeout(self):
        # a Client on a server that never answers: the handshake times out
        srv = socket.socket(socket.AF_UNIX)
        path = os.path.join(D.dir, "silent.sock")
        srv.bind(path)
        srv.listen(1)
        t0 = time.monotonic()
        with self.assertRaises(pc.Timeout):
            pc.Client.connect_unix(path, timeout=0.3)
        self.assertLess(time.monotonic() - t0, 3)
        srv.close()
        os.unlink(path)


class Examples(unittest.TestCase):
    def run_example(self, *args):
        env = dict(os.environ)
        return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                              timeout=60)

    def test_pd_lockstep(self):
        with pc.Client.connect_unix(D.sock) as c:
            c.load_world(path=D.world)
        r = self.run_example(os.path.join(EXAMPLES, "pd_lockstep.py"), "--socket", D.sock,
                             "--steps", "1500", "--body", "ball", "--print-every", "500")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("position error", r.stdout)
        self.assertIn('"mode": "free_body"', r.stdout)

    def test_pd_lockstep_arm(self):
        """Joint-space PD at 1 kHz lock-step on the 7-DOF arm (arm_gripper.xml; arm_slider.xml
        when it is absent): the RMS tracking error read from the frames' joint state."""
        worlds = os.path.join(SRC, "configs", "worlds")
        name = "arm_gripper.xml"
        if not os.path.exists(os.path.join(worlds, name)):
            name = "arm_slider.xml"
        with open(os.path.join(worlds, name)) as f:
            doc = f.read()
        try:
            with pc.Client.connect_unix(D.sock) as c:
                c.load_world(data=doc, name=name)
            r = self.run_example(os.path.join(EXAMPLES, "pd_lockstep.py"), "--socket", D.sock,
                                 "--steps", "1000", "--print-every", "250", "--tol", "0.02")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn('"mode": "joints"', r.stdout)
            summary = json.loads(r.stdout.strip().splitlines()[-1])
            print("\n    %s: tracking error rms %.5f max %.5f, %.1f us per cycle"
                  % (name, summary["tracking_error_rms"], summary["tracking_error_max"],
                     summary["cycle_us"]), file=sys.stderr)
            self.assertLess(summary["tracking_error_rms"], 0.02)
        finally:
            with pc.Client.connect_unix(D.sock) as c:
                c.load_world(path=D.world)

    def test_rt_logger(self):
        r = self.run_example(os.path.join(EXAMPLES, "rt_logger.py"), "--socket", D.sock,
                             "--duration", "0.5", "--hz", "50", "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertTrue(lines[0].startswith("step,sim_time_s,body"))
        self.assertGreaterEqual(len(lines), 1 + NBODIES * 5)
        r = self.run_example(os.path.join(EXAMPLES, "rt_logger.py"), "--socket", D.sock,
                             "--count", "3", "--format", "json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn('"body"', r.stdout)
        with pc.Client.connect_unix(D.sock) as c:
            self.assertEqual(c.get_stats().clock.mode, pc.MODE_LOCKSTEP)


if __name__ == "__main__":
    unittest.main(verbosity=2)
