"""physd_client.vec_env - a vector environment over protocol 1.9's batch of worlds: N copies
of one model in one daemon, reset and stepped together with one StepBatch round trip per step.

    import numpy as np
    from physd_client import Client, VecEnv
    with Client.connect_unix(path) as c:
        env = VecEnv(c, path="/abs/humanoid.xml", num_worlds=256, episode_steps=500)
        obs = env.reset()                       # (256, nq + nv)
        for _ in range(1000):
            obs, done, t = env.step(np.zeros((256, env.nu)))

Semantics (as gymnasium's vector envs with next-step autoreset): ``step(actions)`` applies one
row of actions per world (clamped by the server to each actuator's ctrl range), steps every
world ``frame_skip`` times and returns ``(obs, done, time)`` as numpy arrays: obs
(num_worlds, obs_dim) float64, done (num_worlds,) bool, time (num_worlds,) float64 seconds of
each world's episode. A world is done when its episode reached ``episode_steps`` env steps,
when its step failed on the server (its status is not 0), or when ``terminate(obs)`` (nullable;
returns a bool array) says so. The obs returned with done is the episode's last; the world is
reset (to the loaded state, or ``reset_keyframe``) inside the next step's request, before that
step's actions, so an episode's end costs no extra round trip.

In groups (EnvPool's asynchronous mode): ``send(actions, worlds)`` sends one group's step
without waiting and ``recv()`` returns the oldest group's ``(obs, done, time, worlds)``, so
that while the daemon steps one group the caller works on another's results (the client's own
time per step leaves the round trip). Each world keeps the semantics above; a world may be in
one group in flight at a time.

Observation: ``qpos`` then ``qvel`` of every joint (ModelInfo.joints order, JointInfo.nq / nv
values each), with ``sensors=True`` every sensor's values after them. ``obs_slices`` says
where each part lies. Needs numpy (Debian's python3-numpy); like the Client, not for use
from two threads at once.
"""
import collections

import numpy as np


class VecEnv:
    """N worlds of one model in the daemon behind ``client`` (loaded here, replacing the
    daemon's world). path / data and ``load_kw`` go to Client.load_world."""

    def __init__(self, client, path=None, data=None, num_worlds=1, frame_skip=1,
                 episode_steps=1000, reset_keyframe="", sensors=False, terminate=None,
                 **load_kw):
        if num_worlds < 1:
            raise ValueError("num_worlds must be >= 1")
        if frame_skip < 1 or episode_steps < 1:
            raise ValueError("frame_skip and episode_steps must be >= 1")
        self.client = client
        loaded = client.load_world(path=path, data=data, world_count=num_worlds, **load_kw)
        if max(loaded.world_count, 1) != num_worlds:
            raise RuntimeError("the server loaded %d worlds, not %d (a server before 1.9?)"
                               % (loaded.world_count, num_worlds))
        self.num_worlds = num_worlds
        self.frame_skip = frame_skip
        self.episode_steps = episode_steps
        self.reset_keyframe = reset_keyframe
        self.sensors = bool(sensors)
        self.terminate = terminate
        self.model = client.model_info()
        self.nu = len(self.model.actuators)
        self.timestep = self.model.timestep
        self._episode = np.zeros(num_worlds, dtype=np.int64)  # env steps in the episode
        self._pending = np.zeros(num_worlds, dtype=bool)       # reset in the next request
        self._busy = np.zeros(num_worlds, dtype=bool)          # in a group in flight
        self._inflight = collections.deque()                   # (ticket, worlds, reset)
        self.nq = self.nv = 0
        self.obs_slices = {}

    # ---- the batch request -------------------------------------------------------------------

    def _request(self, actions, reset, no_step):
        idx = np.flatnonzero(reset).tolist()
        kf = [self.reset_keyframe] * len(idx) if self.reset_keyframe else []
        f = self.client.step_batch(ctrl=actions, reset=idx, reset_keyframe=kf,
                                   n=self.frame_skip, no_step=no_step, qpos=True, qvel=True,
                                   sensors=self.sensors)
        return self._obs(f, self.num_worlds)

    def _obs(self, f, n):
        """(obs (n, obs_dim), status (n,)) of a BatchResult of n worlds"""
        self.nq, self.nv = f.nq, f.nv
        # f's arrays are float64 numpy views of the reply: reshaped without a copy, copied once
        # into obs by the concatenation
        parts = [np.asarray(f.qpos, dtype=np.float64).reshape(n, f.nq),
                 np.asarray(f.qvel, dtype=np.float64).reshape(n, f.nv)]
        ns = len(f.sensor_values) // n if self.sensors else 0
        if ns:
            parts.append(np.asarray(f.sensor_values, dtype=np.float64).reshape(n, ns))
        self.obs_slices = {"qpos": slice(0, f.nq), "qvel": slice(f.nq, f.nq + f.nv),
                           "sensors": slice(f.nq + f.nv, f.nq + f.nv + ns)}
        status = np.asarray(f.status, dtype=np.int32)
        return np.concatenate(parts, axis=1), status

    # ---- the vector env ----------------------------------------------------------------------

    def reset(self):
        """Every world back to its start (no step); returns obs (num_worlds, obs_dim)."""
        if self._inflight:
            raise RuntimeError("reset with groups in flight: recv() them first")
        obs, _ = self._request(None, np.ones(self.num_worlds, dtype=bool), True)
        self._episode[:] = 0
        self._pending[:] = False
        return obs

    def step(self, actions):
        """actions: (num_worlds, nu) array-like (None: controls held). Returns
        (obs, done, time); see the module's text."""
        if self._inflight:
            raise RuntimeError("step with groups in flight: recv() them first")
        if actions is not None:
            actions = np.asarray(actions, dtype=np.float64)
            if actions.shape != (self.num_worlds, self.nu):
                raise ValueError("actions must have shape (%d, %d), got %s"
                                 % (self.num_worlds, self.nu, actions.shape))
        reset = self._pending.copy()
        obs, status = self._request(actions, reset, False)
        self._episode[reset] = 0
        self._episode += 1
        done = (self._episode >= self.episode_steps) | (status != 0)
        if self.terminate is not None:
            done |= np.asarray(self.terminate(obs), dtype=bool)
        self._pending = done
        time = self._episode * (self.frame_skip * self.timestep)
        return obs, done, time

    # ---- in groups -----------------------------------------------------------------------------

    def send(self, actions, worlds=None):
        """Send one env step of the group ``worlds`` (indices, distinct; None: every world)
        without waiting: actions (len(worlds), nu) array-like (None: controls held), the
        group's pending resets inside the same request. recv() returns its results; a world
        may not be in two groups in flight."""
        ids = (np.arange(self.num_worlds) if worlds is None
               else np.asarray(worlds, dtype=np.int64).reshape(-1))
        if ids.size == 0 or ids.min() < 0 or ids.max() >= self.num_worlds:
            raise ValueError("worlds must be indices in [0, %d)" % self.num_worlds)
        if np.unique(ids).size != ids.size:
            raise ValueError("worlds must be distinct")
        if self._busy[ids].any():
            raise ValueError("worlds %s are in a group in flight"
                             % ids[self._busy[ids]].tolist())
        if actions is not None:
            actions = np.asarray(actions, dtype=np.float64)
            if actions.shape != (ids.size, self.nu):
                raise ValueError("actions must have shape (%d, %d), got %s"
                                 % (ids.size, self.nu, actions.shape))
        reset = self._pending[ids].copy()
        idx = ids[reset].tolist()
        kf = [self.reset_keyframe] * len(idx) if self.reset_keyframe else []
        ticket = self.client.step_batch_send(worlds=ids.tolist(), ctrl=actions, reset=idx,
                                             reset_keyframe=kf, n=self.frame_skip, qpos=True,
                                             qvel=True, sensors=self.sensors)
        self._busy[ids] = True
        self._inflight.append((ticket, ids, reset))

    def recv(self):
        """The oldest group in flight: (obs, done, time, worlds), the first three as step()'s
        for the group's worlds in its order, worlds its indices (numpy int64)."""
        if not self._inflight:
            raise RuntimeError("no group in flight: send() first")
        ticket, ids, reset = self._inflight.popleft()
        try:
            f = self.client.step_batch_recv(ticket)
        finally:
            self._busy[ids] = False
        obs, status = self._obs(f, ids.size)
        self._episode[ids[reset]] = 0
        self._episode[ids] += 1
        done = (self._episode[ids] >= self.episode_steps) | (status != 0)
        if self.terminate is not None:
            done |= np.asarray(self.terminate(obs), dtype=bool)
        self._pending[ids] = done
        time = self._episode[ids] * (self.frame_skip * self.timestep)
        return obs, done, time, ids
