#!/usr/bin/python3
"""test_python_vec_env.py - protocol 1.9 from Python against the real physd: Client.step_batch
and its errors, physd_client.VecEnv (reset, step with arrays of actions, per-world done flags
and times as numpy arrays, resets inside the next step's request, each world bit for bit the
same as a lone world given the same actions), and examples/vec_pd.py over 256 humanoids.

Env as test_python_client.py, whose daemon fixture (setUpModule, tearDownModule: tpc.D) it
reuses. Exits 77 (skip) when the daemon is not built or numpy is missing.
"""
import json
import os
import sys
import unittest

try:
    import numpy as np
except ImportError:
    print("numpy (python3-numpy) is missing: skipping")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_python_client as tpc  # noqa: E402
from test_python_client import EXAMPLES, pc, setUpModule, tearDownModule  # noqa: E402,F401

# a two-hinge arm with motors on a free base that falls to the floor: nq 7 + 2, nv 6 + 2
ARM = """<mujoco model="vecarm">
  <option timestep="0.002"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="base" pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.05"/>
      <body name="upper" pos="0 0 0.05"><joint name="h1" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.03"/>
        <body name="fore" pos="0 0 0.3"><joint name="h2" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/></body></body></body>
  </worldbody>
  <actuator><motor joint="h1" gear="5" ctrlrange="-1 1" ctrllimited="true"/>
    <motor joint="h2" gear="2" ctrlrange="-1 1" ctrllimited="true"/></actuator>
  <keyframe><key name="up" qpos="0 0 0.5 1 0 0 0 0.3 -0.3"/></keyframe>
</mujoco>
"""
NQ, NV, NU, DT = 9, 8, 2, 0.002
HUMANOID = "/usr/share/mujoco/model/humanoid/humanoid.xml"


def actions(t, n):
    """a deterministic action per world and step: (n, NU)"""
    w = np.arange(n)[:, None]
    a = np.arange(NU)[None, :]
    return 0.9 * np.sin(0.2 * t + 0.5 * w + a)


class VecEnvTest(unittest.TestCase):
    def setUp(self):
        self.c = pc.Client.connect_unix(tpc.D.sock, name="vec_env_test", timeout=30)
        self.c.set_mode(pc.MODE_LOCKSTEP)

    def tearDown(self):
        self.c.close()

    def test_reset_and_step(self):
        env = pc.VecEnv(self.c, data=ARM, num_worlds=8, episode_steps=50)
        self.assertEqual((env.nu, env.num_worlds), (NU, 8))
        obs = env.reset()
        self.assertEqual(obs.shape, (8, NQ + NV))
        self.assertTrue((obs == obs[0]).all())  # every world starts as loaded
        self.assertEqual(obs[0, 2], 0.3)         # the base's z
        obs, done, t = env.step(actions(0, 8))
        self.assertEqual((obs.dtype, done.dtype, t.dtype), (np.float64, np.bool_, np.float64))
        self.assertEqual(done.shape, (8,))
        self.assertFalse(done.any())
        np.testing.assert_array_equal(t, np.full(8, DT))
        self.assertFalse((obs[1] == obs[0]).all())  # other actions, another state
        with self.assertRaises(ValueError):
            env.step(np.zeros((8, NU + 1)))

    def test_worlds_equal_lone_world(self):
        """world i of 8 is bit for bit world 0 of a batch of 1 given world i's actions"""
        env = pc.VecEnv(self.c, data=ARM, num_worlds=8, episode_steps=1000)
        env.reset()
        traj8 = []
        for t in range(40):
            traj8.append(env.step(actions(t, 8))[0])
        for i in (0, 5):
            lone = pc.VecEnv(self.c, data=ARM, num_worlds=1, episode_steps=1000)
            lone.reset()
            for t in range(40):
                obs = lone.step(actions(t, 8)[i:i + 1])[0]
                np.testing.assert_array_equal(obs[0], traj8[t][i])

    def test_episode_end_resets_in_next_request(self):
        ends = []

        def terminate(obs):
            d = np.zeros(len(obs), dtype=bool)
            if len(ends) == 2:
                d[3] = True  # world 3 ends its episode after its third step
            ends.append(1)
            return d

        env = pc.VecEnv(self.c, data=ARM, num_worlds=4, episode_steps=5, terminate=terminate)
        env.reset()
        first = env.step(actions(0, 4))[0]
        for t in range(1, 3):
            obs, done, tm = env.step(actions(t, 4))
        np.testing.assert_array_equal(done, [False, False, False, True])
        # world 3 is reset inside this request: one step of its new episode
        obs, done, tm = env.step(actions(0, 4))
        np.testing.assert_allclose(tm, [4 * DT, 4 * DT, 4 * DT, DT])
        np.testing.assert_array_equal(obs[3], first[3])
        obs, done, tm = env.step(actions(4, 4))
        np.testing.assert_array_equal(done, [True, True, True, False])  # the time limit
        obs, done, tm = env.step(actions(0, 4))
        np.testing.assert_array_equal(obs[:3], first[:3])
        np.testing.assert_allclose(tm[:3], DT)

    def test_step_batch_ctrl_forms_agree(self):
        """ctrl as a numpy (worlds, nu) array, float32 array and flat list: the same states, bit
        for bit; every selected array has its size"""
        results = []
        for form in (lambda a: a, lambda a: a.astype(np.float32),
                     lambda a: a.ravel().tolist()):
            self.c.load_world(data=ARM, world_count=4)
            for t in range(5):
                a = actions(t, 4).astype(np.float32).astype(np.float64)
                f = self.c.step_batch(ctrl=form(a), qpos=True, qvel=True, actuator_force=True,
                                      sensors=True)
            results.append(f)
        for f in results[1:]:
            for name in ("qpos", "qvel", "actuator_force"):
                np.testing.assert_array_equal(getattr(f, name), getattr(results[0], name))
            self.assertEqual(list(f.step), [5] * 4)
        f = results[0]
        self.assertEqual((f.nq, f.nv, len(f.qpos), len(f.qvel), len(f.actuator_force)),
                         (NQ, NV, 4 * NQ, 4 * NV, 4 * NU))
        self.assertEqual((list(f.worlds), list(f.status), f.message), ([0, 1, 2, 3], [0] * 4, ""))
        self.c.load_world(data=ARM)

    def test_keyframe_reset(self):
        env = pc.VecEnv(self.c, data=ARM, num_worlds=3, reset_keyframe="up")
        obs = env.reset()
        np.testing.assert_allclose(obs[:, 2], 0.5)
        np.testing.assert_allclose(obs[:, 7:9], [[0.3, -0.3]] * 3)

    def test_step_batch_errors(self):
        self.c.load_world(data=ARM, world_count=4)
        before = self.c.step_batch(no_step=True, qpos=True)
        for kw, field in ((dict(worlds=[0, 4]), "StepBatch.worlds[1]"),
                          (dict(ctrl=[0.0] * 3), "StepBatch.ctrl"),
                          (dict(ctrl=[0.0] * 7 + [float("nan")]), "StepBatch.ctrl[7]"),
                          (dict(ctrl=np.full((4, NU), np.inf)), "StepBatch.ctrl[0]"),
                          (dict(reset=[2, 2]), "StepBatch.reset[1]"),
                          (dict(reset=[1], reset_keyframe=["nosuch"]),
                           "StepBatch.reset_keyframe[0]")):
            with self.assertRaises(pc.ServerError) as cm:
                self.c.step_batch(**kw)
            self.assertIn(field, str(cm.exception))
            self.assertEqual(cm.exception.code_name,
                             "NOT_FOUND" if "keyframe" in field else "INVALID_ARGUMENT")
        after = self.c.step_batch(no_step=True, qpos=True)
        self.assertEqual(list(after.qpos), list(before.qpos))
        self.assertEqual(list(after.step), [0, 0, 0, 0])
        self.assertEqual((type(after.qpos), after.qpos.dtype, after.qpos.shape),
                         (np.ndarray, np.float64, (4 * NQ,)))
        with self.assertRaises(pc.ServerError) as cm:
            self.c.get_state()
        self.assertEqual(cm.exception.code_name, "INCORRECT_STATE")
        self.c.load_world(data=ARM)  # a single world again for the other tests


    def test_groups_equal_step(self):
        """send/recv in two groups in flight, worlds interleaved, with episode ends: every
        world's obs, done and time bit for bit those of step() over all worlds"""
        n, steps = 6, 16
        env = pc.VecEnv(self.c, data=ARM, num_worlds=n, episode_steps=5)
        env.reset()
        want = [env.step(actions(t, n)) for t in range(steps)]
        env = pc.VecEnv(self.c, data=ARM, num_worlds=n, episode_steps=5)
        env.reset()
        groups = (np.array([0, 2, 4]), np.array([5, 3, 1]))
        t_of = np.zeros(n, dtype=int)   # each world's next env step
        for g in groups:
            env.send(actions(0, n)[g], worlds=g)
            t_of[g] += 1
        for k in range(2 * steps):
            obs, done, tm, ids = env.recv()
            g = groups[k % 2]
            np.testing.assert_array_equal(ids, g)
            t = t_of[g[0]] - 1
            np.testing.assert_array_equal(obs, want[t][0][g])
            np.testing.assert_array_equal(done, want[t][1][g])
            np.testing.assert_array_equal(tm, want[t][2][g])
            if t_of[g[0]] < steps:
                env.send(actions(t_of[g[0]], n)[g], worlds=g)
                t_of[g] += 1
        self.assertTrue(any(w[1].any() for w in want))  # episodes ended on the way

    def test_groups_errors_and_other_requests(self):
        env = pc.VecEnv(self.c, data=ARM, num_worlds=4, episode_steps=100)
        env.reset()
        with self.assertRaises(RuntimeError):
            env.recv()                                   # nothing in flight
        env.send(actions(0, 4)[:2], worlds=[0, 1])
        for bad in (dict(actions=actions(0, 4)[:2], worlds=[1, 2]),     # 1 is in flight
                    dict(actions=actions(0, 4)[:2], worlds=[2, 2]),     # not distinct
                    dict(actions=actions(0, 4)[:2], worlds=[2, 4]),     # out of range
                    dict(actions=actions(0, 4)[:3], worlds=[2, 3])):    # wrong shape
            with self.assertRaises(ValueError):
                env.send(**bad)
        with self.assertRaises(RuntimeError):
            env.step(actions(0, 4))                      # groups in flight
        env.send(None, worlds=[3])
        # another request between: its reply and the groups' are told apart
        self.assertEqual(len(self.c.model_info().actuators), NU)
        obs, done, tm, ids = env.recv()
        self.assertEqual((obs.shape, list(ids)), ((2, NQ + NV), [0, 1]))
        obs, done, tm, ids = env.recv()
        self.assertEqual((obs.shape, list(ids), list(tm)), ((1, NQ + NV), [3], [DT]))
        # client tickets: received in any order, each once
        a = self.c.step_batch_send(worlds=[0], no_step=True, qpos=True)
        b = self.c.step_batch_send(worlds=[1, 2], no_step=True, qpos=True)
        fb = self.c.step_batch_recv(b)
        fa = self.c.step_batch_recv(a)
        self.assertEqual((list(fa.worlds), list(fb.worlds)), ([0], [1, 2]))
        with self.assertRaises(ValueError):
            self.c.step_batch_recv(a)
        # a refused request's ticket raises its ServerError, and changes nothing
        bad = self.c.step_batch_send(worlds=[0, 9])
        with self.assertRaises(pc.ServerError) as cm:
            self.c.step_batch_recv(bad)
        self.assertEqual(cm.exception.code_name, "INVALID_ARGUMENT")
        self.c.load_world(data=ARM)

    def test_groups_with_reader_thread(self):
        """after a subscribe the reader thread reads the socket: it keeps the tickets' replies
        for their recv, in any order"""
        self.c.load_world(data=ARM)
        self.c.subscribe(lambda frame: None, bodies=[])   # starts the reader thread
        env = pc.VecEnv(self.c, data=ARM, num_worlds=4, episode_steps=100)
        env.reset()
        self.assertIsNotNone(self.c._reader)
        env.send(actions(0, 4)[:2], worlds=[0, 1])
        env.send(actions(0, 4)[2:], worlds=[2, 3])
        self.assertEqual(len(self.c.model_info().actuators), NU)
        got = [env.recv()[3].tolist() for _ in range(2)]
        self.assertEqual(got, [[0, 1], [2, 3]])
        a = self.c.step_batch_send(worlds=[1], no_step=True, qpos=True)
        b = self.c.step_batch_send(worlds=[2], no_step=True, qpos=True)
        self.assertEqual(list(self.c.step_batch_recv(b).worlds), [2])
        self.assertEqual(list(self.c.step_batch_recv(a).worlds), [1])


class VecPdExample(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(HUMANOID), "MuJoCo's humanoid model is not installed")
    def test_vec_pd_256_humanoids(self):
        import subprocess
        r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "vec_pd.py"), "--socket",
                            tpc.D.sock, "--worlds", "256", "--steps", "3"], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertEqual((out["worlds"], out["env_steps"], out["finite"]), (256, 3, True))


if __name__ == "__main__":
    unittest.main(verbosity=2)
