"""physd_client.client - a blocking client of the physd wire protocol v1.9 (1.5:
``ServerError.steps_done``; 1.7: ``Client.last_stream_error``; 1.9: batches of worlds,
``load_world(world_count=N)`` and :meth:`Client.step_batch`; vec_env.VecEnv builds a vector
environment on them).

Protocol 1.2 adds the contact solver: :meth:`Client.solvers` (the server's table, from
Welcome), ``load_world(solver=..., max_iterations=..., tolerance=...)``, :meth:`Client.set_solver`,
and ``ModelInfo.solver`` / ``Stats.solver`` (the solver in force). Against a 1.1 server the
list is empty and set_solver raises ServerError (not a request).

Threading, as in the C library (libphysclient):

* Requests on one Client are serialised by a lock; any thread may call them.
* Until the first :meth:`Client.subscribe`, the calling thread reads its own reply (no thread
  hop on the 1 kHz step_and_observe path). The first subscribe starts a daemon reader thread
  that from then on reads the socket, hands replies to the waiting caller and runs subscription
  callbacks for stream frames.
* Callbacks run on the reader thread; they must not make requests on the same Client (their
  replies are read by that thread) and should return quickly. A slow callback only makes the
  server drop stream frames for this client (latest-wins); it never slows the simulation.

Every request waits at most ``timeout`` seconds (:class:`Timeout`); a late reply is recognised
by its req_id and discarded. Results are the protobuf messages of physd_pb2 (StateFrame,
ModelInfo, Stats, ...), except step_batch's BatchResult (the BatchFrame's fields, its arrays
as numpy arrays: _batch_wire.py); failures raise :class:`PhysdError` subclasses.
"""
import os
import select
import socket
import struct
import threading
import time

from . import _batch_wire, _proto

PROTO_MAJOR = 1
PROTO_MINOR = 9
MAX_FRAME_DEFAULT = 16 << 20
_HANDSHAKE_MAX_FRAME = 1 << 20

# proto enums, as plain ints (the same numbers as physd.proto)
MODE_LOCKSTEP, MODE_BARRIER, MODE_REALTIME, MODE_MAX_SPEED = 0, 1, 2, 3
DEADLINE_WAIT, DEADLINE_EVICT, DEADLINE_FREEWHEEL = 0, 1, 2
FORMAT_AUTO, FORMAT_MJCF, FORMAT_URDF = 0, 1, 2
GEOM_SPHERE, GEOM_CAPSULE, GEOM_BOX, GEOM_CYLINDER = 0, 1, 2, 3
GEOM_PLANE, GEOM_ELLIPSOID, GEOM_MESH = 4, 5, 6  # 1.8: in ModelInfo.geoms only (not AddBody)
CMD_TORQUE, CMD_POSITION, CMD_VELOCITY, CMD_PD = 0, 1, 2, 3

ERROR_CODES = ("ERROR_UNSPECIFIED", "INVALID_ARGUMENT", "NOT_FOUND", "INCORRECT_STATE",
               "UNAUTHENTICATED", "RESOURCE_EXHAUSTED", "VERSION_MISMATCH", "INTERNAL",
               "UNSUPPORTED", "DEADLINE_EXCEEDED", "SHUTTING_DOWN")  # SHUTTING_DOWN: server 1.5


class PhysdError(Exception):
    """Base of every error of this package. code is the server's ErrorCode (0 if none)."""

    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def code_name(self):
        return ERROR_CODES[self.code] if 0 <= self.code < len(ERROR_CODES) else "?"


class ServerError(PhysdError):
    """The server answered Error{code, message}. steps_done (1.5): with SHUTTING_DOWN, how many
    steps of a Step / StepAndObserve ran before the server stopped (the world advanced that
    many); 0 otherwise."""

    def __init__(self, message, code=0, steps_done=0):
        super().__init__(message, code)
        self.steps_done = steps_done


class ConnectionClosed(PhysdError):
    """The connection failed or was closed; the Client cannot be used any more."""


class ProtocolError(ConnectionClosed):
    """Bad preamble, oversize or undecodable frame."""


class VersionMismatch(PhysdError):
    """The server speaks another protocol major."""


class Timeout(PhysdError):
    """No reply within the Client's timeout (the Client stays usable)."""


def default_socket_path():
    """$XDG_RUNTIME_DIR/physd.sock, else /tmp/physd-<uid>.sock (the daemon's default)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "physd.sock")
    return "/tmp/physd-%d.sock" % os.getuid()


def _vec3(msg, v):
    msg.x, msg.y, msg.z = (float(v[0]), float(v[1]), float(v[2]))


def _quat(msg, q):
    msg.w, msg.x, msg.y, msg.z = (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


class Client:
    """One connection to physd. Create with :meth:`connect_unix` or :meth:`connect_tcp`; use as
    a context manager or call :meth:`close`."""

    def __init__(self, sock, name="physd_client", token="", timeout=10.0, pb2_dir=None):
        """Take a connected stream socket and do the handshake (preambles, Hello, Welcome)."""
        self.pb = _proto.load(pb2_dir)
        self._wire = _batch_wire.Wire(self.pb)
        self._sock = sock
        self.timeout = float(timeout)
        self._req_lock = threading.Lock()
        self._cond = threading.Condition()
        self._next_id = 0
        self._rbuf = bytearray(1 << 16)   # the reply buffer (see framing)
        self._rview = memoryview(self._rbuf)
        self._rpos = self._rend = 0
        self._partial = None   # [body, bytes received] of a frame cut short by a Timeout
        self._max_frame = _HANDSHAKE_MAX_FRAME
        self._reader = None
        self._waiting = 0
        self._reply = None
        self._tickets = set()        # req_ids of step_batch_send requests not yet received
        self._early = {}             # their replies read before step_batch_recv asked
        self._broken = None          # the PhysdError that broke the connection
        self._event_error = None     # last Error event (req_id 0)
        self.last_stream_error = None  # 1.7: last overflow report of a subscription (its frames are dropped until they fit)
        self._subs = {}
        self._cb_lock = threading.Lock()
        self.callback_error = None   # the exception of a callback that raised (it was dropped)
        sock.setblocking(False)
        try:
            self.welcome = self._handshake(name, token)
        except BaseException:
            sock.close()
            raise
        lim = self.welcome.limits.max_frame_bytes
        self._max_frame = lim if lim else MAX_FRAME_DEFAULT

    # ---- construction -----------------------------------------------------------------------

    @classmethod
    def connect_unix(cls, path=None, name="physd_client", token="", timeout=10.0, pb2_dir=None):
        """Connect to the daemon's Unix socket (default: :func:`default_socket_path`)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path or default_socket_path())
        except OSError as e:
            s.close()
            raise ConnectionClosed("cannot connect to %s: %s" % (path or default_socket_path(), e))
        return cls(s, name, token, timeout, pb2_dir)

    @classmethod
    def connect_tcp(cls, host="127.0.0.1", port=0, name="physd_client", token="", timeout=10.0,
                    pb2_dir=None):
        """Connect over TCP (TCP_NODELAY)."""
        try:
            s = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ConnectionClosed("cannot connect to %s:%s: %s" % (host, port, e))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(s, name, token, timeout, pb2_dir)

    def close(self):
        """Close the socket and stop the reader thread (after a running callback returns).
        Not from a callback."""
        with self._cond:
            if self._broken is None:
                self._broken = ConnectionClosed("client closed")
            self._cond.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join()
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def has_feature(self, name):
        return name in self.welcome.features

    # ---- framing ----------------------------------------------------------------------------
    # Replies are read into one reusable buffer (self._rbuf, unread bytes at [_rpos, _rend));
    # a frame's body is handed out as its own bytearray: copied out of the buffer once when it
    # is there whole, else received straight into the new bytearray (a big BatchFrame).

    def _recv_into(self, view, deadline):
        """recv_into view (non-empty) and return the byte count (> 0); deadline None waits
        forever."""
        while True:
            try:
                got = self._sock.recv_into(view)
            except (BlockingIOError, InterruptedError):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise Timeout("no reply within %.3f s" % self.timeout)
                select.select([self._sock], [], [], left)
                continue
            except OSError as e:
                raise ConnectionClosed("recv: %s" % e)
            if not got:
                if self._event_error is not None:
                    raise ConnectionClosed("server closed the connection: %s"
                                           % self._event_error.message, self._event_error.code)
                raise ConnectionClosed("server closed the connection")
            return got

    def _fill(self, need, deadline):
        """Read until the buffer holds need (<= its size) unread bytes."""
        if self._rpos == self._rend:
            self._rpos = self._rend = 0
        while self._rend - self._rpos < need:
            if len(self._rbuf) - self._rpos < need:  # move the unread bytes to the front
                k = self._rend - self._rpos
                self._rview[:k] = self._rview[self._rpos:self._rend].tobytes()
                self._rpos, self._rend = 0, k
            self._rend += self._recv_into(self._rview[self._rend:], deadline)

    def _take(self, n):
        """The next n buffered bytes, consumed."""
        data = self._rview[self._rpos:self._rpos + n].tobytes()
        self._rpos += n
        return data

    def _read_raw(self, deadline):
        """The next frame's body, as a bytearray of its own. A big frame is received straight
        into it; one cut short by a Timeout is resumed by the next call (self._partial)."""
        if self._partial is None:
            self._fill(4, deadline)
            (n,) = struct.unpack_from("<I", self._rbuf, self._rpos)
            if n > self._max_frame:   # checked before the frame is read or allocated
                raise ProtocolError("frame of %d bytes exceeds the limit of %d bytes"
                                    % (n, self._max_frame))
            self._rpos += 4
            have = self._rend - self._rpos
            if have >= n:
                body = bytearray(self._rview[self._rpos:self._rpos + n])
                self._rpos += n
                return body
            body = bytearray(n)
            body[:have] = self._rview[self._rpos:self._rend]
            self._rpos = self._rend = 0
            self._partial = [body, have]
        body, have = self._partial
        view = memoryview(body)
        try:
            while have < len(body):
                have += self._recv_into(view[have:], deadline)
                self._partial[1] = have
        finally:
            view.release()
        self._partial = None
        return body

    def _parse(self, raw):
        """An Envelope from a frame's body; ProtocolError when protobuf cannot decode it."""
        env = self.pb.Envelope()
        try:
            env.ParseFromString(raw)
        except Exception as e:  # protobuf's DecodeError
            raise ProtocolError("undecodable frame of %d bytes: %s" % (len(raw), e))
        return env

    def _read_frame(self, deadline):
        return self._parse(self._read_raw(deadline))

    def _frame_req_id(self, raw):
        """(req_id, the parsed Envelope or None): the req_id from a scan, the Envelope only
        when the scan could not tell it (then protobuf decides)."""
        rid = self._wire.req_id_of(raw)
        if rid is not None:
            return rid, None
        env = self._parse(raw)
        return env.req_id, env

    def _send_all(self, data, deadline):
        view = memoryview(data)
        while view:
            try:
                n = self._sock.send(view)
                view = view[n:]
            except (BlockingIOError, InterruptedError):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Timeout("send timed out")
                select.select([], [self._sock], [], left)
            except OSError as e:
                raise ConnectionClosed("send: %s" % e)

    def _encode(self, env):
        return self._frame(env.SerializeToString())

    def _frame(self, body):
        """The length prefix and body; PhysdError when it exceeds the frame limit."""
        if len(body) > self._max_frame:
            raise PhysdError("request of %d bytes exceeds the frame limit of %d bytes"
                             % (len(body), self._max_frame))
        return struct.pack("<I", len(body)) + body

    def _handshake(self, name, token):
        deadline = time.monotonic() + self.timeout
        self._next_id += 1
        env = self.pb.Envelope(req_id=self._next_id)
        env.hello.major = PROTO_MAJOR
        env.hello.minor = PROTO_MINOR
        env.hello.client_name = name or "physd_client"
        env.hello.auth_token = token or ""
        self._send_all(b"PHYS" + struct.pack("<HH", PROTO_MAJOR, PROTO_MINOR) + self._encode(env),
                       deadline)
        try:
            self._fill(8, deadline)
        except ConnectionClosed as e:
            raise ConnectionClosed("server closed the connection during the handshake (%s)"
                                   % e.message)
        pre = self._take(8)
        if pre[:4] != b"PHYS":
            raise ProtocolError("not a physd server: preamble %r, expected b'PHYS'" % pre[:4])
        major, minor = struct.unpack("<HH", pre[4:])
        if major != PROTO_MAJOR:
            raise VersionMismatch("server speaks protocol %d.%d, this client %d.%d"
                                  % (major, minor, PROTO_MAJOR, PROTO_MINOR), 6)
        reply = self._read_frame(deadline)
        kind = reply.WhichOneof("msg")
        if kind == "error":
            code = reply.error.code
            msg = "handshake refused: %s: %s" % (ERROR_CODES[code] if code < len(ERROR_CODES)
                                                 else code, reply.error.message)
            raise (VersionMismatch if code == 6 else ServerError)(msg, code)
        if kind != "welcome":
            raise ProtocolError("expected Welcome, got %s" % kind)
        if reply.welcome.major != PROTO_MAJOR:
            raise VersionMismatch("server speaks protocol %d.%d, this client %d.%d"
                                  % (reply.welcome.major, reply.welcome.minor, PROTO_MAJOR,
                                     PROTO_MINOR), 6)
        return reply.welcome

    # ---- request core -----------------------------------------------------------------------

    def _break(self, err):
        with self._cond:
            if self._broken is None:
                self._broken = err
            self._cond.notify_all()

    def _dispatch(self, env):
        """An event (req_id 0): stream frames to their callback, Errors remembered."""
        kind = env.WhichOneof("msg")
        if kind == "state":
            with self._cb_lock:
                sub = self._subs.get(env.state.subscription_id)
                if sub is not None:
                    sub(env.state)
        elif kind == "error" and env.error.subscription_id:
            # 1.7: a subscription's frames went over max_frame_bytes (not about the connection)
            self.last_stream_error = ServerError(env.error.message, env.error.code)
        elif kind == "error":
            self._event_error = ServerError("%s: %s" % (ERROR_CODES[env.error.code]
                                                        if env.error.code < len(ERROR_CODES)
                                                        else env.error.code, env.error.message),
                                            env.error.code)

    def _reader_main(self):
        while True:
            env = None
            try:
                raw = self._read_raw(None)
                rid, env = self._frame_req_id(raw)
                if rid == 0 and env is None:
                    env = self._parse(raw)
            except PhysdError as e:
                self._break(e)
                return
            except Exception as e:   # a failing callback must not kill the connection silently
                self._break(ConnectionClosed("reader thread: %r" % e))
                return
            if rid == 0:
                try:
                    self._dispatch(env)
                except Exception as e:   # a failing callback: report it once, drop it
                    import traceback
                    traceback.print_exc()
                    self.callback_error = e
                    with self._cb_lock:
                        self._subs.pop(env.state.subscription_id, None)
                continue
            with self._cond:   # the caller decodes the reply's body
                if rid == self._waiting and self._reply is None:
                    self._reply = raw
                    self._cond.notify_all()
                elif rid in self._tickets:   # a step_batch_send's, kept for its recv
                    self._early[rid] = raw
                    self._cond.notify_all()

    def _call(self, env, want=None):
        """Send env (req_id assigned here) and return the reply; want: the expected oneof name
        (None: anything but Error)."""
        def body(rid):
            env.req_id = rid
            return env.SerializeToString()
        raw, _ = self._exchange(body)
        return self._check(self._parse_reply(raw), want, env.WhichOneof("msg"))

    def _parse_reply(self, raw):
        """_parse for a request's own reply: an undecodable one breaks the connection, as an
        undecodable frame read anywhere else does."""
        try:
            return self._parse(raw)
        except ProtocolError as e:
            self._break(e)
            raise

    def _check(self, reply, want, request):
        """reply, or the ServerError of an Error reply / PhysdError of an unexpected one."""
        kind = reply.WhichOneof("msg")
        if kind == "error":
            code = reply.error.code
            raise ServerError("%s: %s" % (ERROR_CODES[code] if code < len(ERROR_CODES) else code,
                                          reply.error.message), code, reply.error.steps_done)
        if want is not None and kind != want:
            raise PhysdError("unexpected reply %s to %s (expected %s)" % (kind, request, want))
        return reply

    def _exchange(self, make_body):
        """Send the Envelope bytes make_body(req_id) (req_id assigned here) and return (the
        reply frame's body, req_id): requests are serialised by the lock, events met on the
        way dispatched, late replies discarded."""
        with self._req_lock:
            if self._broken is not None:
                raise ConnectionClosed("connection is closed: %s" % self._broken.message,
                                       self._broken.code)
            self._next_id += 1
            rid = self._next_id
            deadline = time.monotonic() + self.timeout
            data = self._frame(make_body(rid))
            if self._reader is not None:
                with self._cond:
                    self._waiting = rid
                    self._reply = None
            try:
                self._send_all(data, deadline)
            except PhysdError as e:
                self._break(e if isinstance(e, ConnectionClosed) else ConnectionClosed(e.message))
                raise
            if self._reader is not None:
                with self._cond:
                    while self._reply is None and self._broken is None:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            self._waiting = 0
                            raise Timeout("no reply within %.3f s" % self.timeout)
                        self._cond.wait(left)
                    raw, self._reply, self._waiting = self._reply, None, 0
                    if raw is None:
                        raise ConnectionClosed("connection is closed: %s" % self._broken.message,
                                               self._broken.code)
                return raw, rid
            return self._read_until(rid, deadline), rid

    def _read_until(self, rid, deadline):
        """Read frames on the calling thread (no reader thread) until req_id rid's reply and
        return its body: events dispatched, step_batch_send tickets' replies kept for their
        recv, late replies of other requests discarded. Called under _req_lock."""
        while True:
            try:
                raw = self._read_raw(deadline)
                got, env = self._frame_req_id(raw)
                if got == 0 and env is None:
                    env = self._parse(raw)
            except Timeout:
                raise
            except PhysdError as e:
                self._break(e)
                raise
            if got == rid:
                return raw
            if got == 0:
                self._dispatch(env)
            elif got in self._tickets:   # a step_batch_send's, kept for its recv
                self._early[got] = raw

    def _env(self):
        return self.pb.Envelope()

    @staticmethod
    def _selector(sel, bodies, contacts, stats, joints=(), actuators=False, sensors=False):
        """bodies None = every body; joints None = every joint, () = none (protocol 1.1)."""
        if bodies is None:
            sel.all_bodies = True
        else:
            sel.bodies.extend(int(b) for b in bodies)
        sel.contacts = bool(contacts)
        sel.stats = bool(stats)
        if joints is None:
            sel.all_joints = True
        else:
            sel.joints.extend(int(j) for j in joints)
        sel.actuators = bool(actuators)
        sel.sensors = bool(sensors)

    @staticmethod
    def _fill_actuators(msg, controls, seq=0):
        """controls: {actuator id (int) or name (str): ctrl}."""
        ids = [(k, v) for k, v in controls.items() if not isinstance(k, str)]
        names = [(k, v) for k, v in controls.items() if isinstance(k, str)]
        msg.ids.extend(int(k) for k, _ in ids)
        msg.names.extend(k for k, _ in names)
        msg.ctrl.extend(float(v) for _, v in ids + names)
        msg.seq = seq

    def _fill_command(self, msg, joint_ids, mode=CMD_TORQUE, q=(), qd=(), tau=(), kp=(), kd=(),
                      seq=0):
        msg.joint_ids.extend(int(j) for j in joint_ids)
        msg.mode = mode
        msg.q.extend(q)
        msg.qd.extend(qd)
        msg.tau.extend(tau)
        msg.kp.extend(kp)
        msg.kd.extend(kd)
        msg.seq = seq

    # ---- requests ---------------------------------------------------------------------------

    def ping(self):
        """Round trip in seconds (float) and the Pong message, as a tuple."""
        env = self._env()
        t0 = time.monotonic_ns()
        env.ping.client_time_ns = t0
        r = self._call(env, "pong")
        return (time.monotonic_ns() - t0) / 1e9, r.pong

    def load_world(self, path=None, data=None, format=FORMAT_AUTO, name="", floating_base=False,
                   package_paths=(), repair_inertia=False, base_dir="", ground_plane=False,
                   solver="", max_iterations=None, tolerance=None, base_pos=None,
                   base_quat=None, solver_options=None, world_count=0):
        """LoadWorld by path (inside the server's allowed roots) or by document bytes/str.
        Returns WorldLoaded (its notices list what the loader ignored or repaired). The URDF
        options (protocol 1.1: floating_base, package_paths, repair_inertia, base_dir,
        ground_plane) are ignored for MJCF. Protocol 1.2: ``solver`` (a name of
        :meth:`solvers`; "" = the document's choice, else the server's default) and, when not
        None, ``max_iterations`` and ``tolerance`` pick the contact solver. Protocol 1.3:
        ``base_pos`` (x, y, z) and ``base_quat`` (w, x, y, z) place a URDF floating base. Protocol
        1.6: ``solver_options`` ({"canal.beta_scale": 30, ...}) sets options of the solver in
        force after the load (see :meth:`solver_options`). Protocol 1.9: ``world_count`` N >= 2
        loads a batch of N copies of the model, stepped with :meth:`step_batch` (0 or 1: one
        world); a 1.8 server ignores it and loads one world (WorldLoaded.world_count is then
        0)."""
        if (path is None) == (data is None):
            raise ValueError("give exactly one of path and data")
        env = self._env()
        if path is not None:
            env.load_world.path = os.fspath(path)
        else:
            env.load_world.data = data.encode() if isinstance(data, str) else bytes(data)
        env.load_world.format = format
        env.load_world.name = name
        env.load_world.floating_base = bool(floating_base)
        env.load_world.package_paths.extend(os.fspath(p) for p in package_paths)
        env.load_world.repair_inertia = bool(repair_inertia)
        env.load_world.base_dir = os.fspath(base_dir)
        env.load_world.ground_plane = bool(ground_plane)
        env.load_world.solver = solver or ""
        if max_iterations is not None:
            env.load_world.max_iterations = int(max_iterations)
            env.load_world.has_max_iterations = True
        if tolerance is not None:
            env.load_world.tolerance = float(tolerance)
            env.load_world.has_tolerance = True
        if base_pos is not None:  # 1.3: a URDF floating base's starting pose
            _vec3(env.load_world.base_pos, base_pos)
        if base_quat is not None:
            _quat(env.load_world.base_quat, base_quat)
        self._solver_options(env.load_world.solver_options, solver_options)
        env.load_world.world_count = int(world_count)
        return self._call(env, "world_loaded").world_loaded

    def step_batch(self, worlds=(), ctrl=None, reset=(), reset_keyframe=(), n=1, no_step=False,
                   qpos=False, qvel=False, actuator_force=False, sensors=False):
        """Protocol 1.9: StepBatch. Resets the worlds of ``reset`` (indices; ``reset_keyframe``
        empty, or one name per reset, "" = the loaded state), then sets ``ctrl`` (None: controls
        held; else one value per actuator for each chosen world, world-major: a flat sequence
        of numbers or a numpy array of shape (worlds, nu), read in C order), then steps the
        chosen worlds (``worlds`` indices, empty = all) n times (none with ``no_step``).

        Returns a BatchResult with the BatchFrame's fields by the same names: per world
        ``worlds``, ``step``, ``sim_time_ns``, ``status`` (0, or 7 INTERNAL for a failed step;
        lists of ints), ``nq``, ``nv``, ``message``, and the selected flat arrays ``qpos``
        (``nq`` per world), ``qvel`` (``nv``), ``actuator_force``, ``sensor_values`` as float64
        numpy arrays viewing the reply's buffer (writable, owned by this result; without numpy
        array.array('d') copies; empty when not selected). The controls travel as raw packed
        doubles and the arrays are not converted element by element (_batch_wire.py). Bad input
        (a wrong count, a non-finite value, a bad index) raises ServerError and changes
        nothing; a 1.8 server answers UNSUPPORTED."""
        head, ctrl_bytes = self._batch_request(worlds, ctrl, reset, reset_keyframe, n, no_step,
                                               qpos, qvel, actuator_force, sensors)
        raw, rid = self._exchange(lambda rid: self._wire.request(rid, head, ctrl_bytes))
        return self._batch_result(raw, rid)

    def _batch_request(self, worlds, ctrl, reset, reset_keyframe, n, no_step, qpos, qvel,
                       actuator_force, sensors):
        """The StepBatch's fields but its controls, serialised, and the controls' raw bytes."""
        m = self.pb.StepBatch()
        m.worlds.extend(int(w) for w in worlds)
        m.reset.extend(int(w) for w in reset)
        m.reset_keyframe.extend(str(k) for k in reset_keyframe)
        m.n = int(n)
        m.no_step = bool(no_step)
        m.selector.qpos = bool(qpos)
        m.selector.qvel = bool(qvel)
        m.selector.actuator_force = bool(actuator_force)
        m.selector.sensors = bool(sensors)
        return m.SerializeToString(), b"" if ctrl is None else self._wire.ctrl_bytes(ctrl)

    def _batch_result(self, raw, rid):
        """A StepBatch's reply as a BatchResult (an Error raises)."""
        result = self._wire.reply(raw, rid)
        if result is not None:
            return result
        # an Error, or a frame the scan does not take: protobuf parses it whole
        reply = self._check(self._parse_reply(raw), "batch_frame", "step_batch")
        return _batch_wire.from_message(reply.batch_frame)

    def step_batch_send(self, worlds=(), ctrl=None, reset=(), reset_keyframe=(), n=1,
                        no_step=False, qpos=False, qvel=False, actuator_force=False,
                        sensors=False):
        """step_batch's request, sent without waiting for its reply: returns a ticket for
        :meth:`step_batch_recv`. Several may be in flight on one Client (the server answers a
        connection's requests in order), so that while the server steps some worlds the
        caller works on the others' results (a vector env in groups, as EnvPool's
        send/recv). Other requests may be made meanwhile; their replies are told apart by
        req_id and the tickets' replies kept for their recv."""
        head, ctrl_bytes = self._batch_request(worlds, ctrl, reset, reset_keyframe, n, no_step,
                                               qpos, qvel, actuator_force, sensors)
        with self._req_lock:
            if self._broken is not None:
                raise ConnectionClosed("connection is closed: %s" % self._broken.message,
                                       self._broken.code)
            self._next_id += 1
            rid = self._next_id
            data = self._frame(self._wire.request(rid, head, ctrl_bytes))
            with self._cond:
                self._tickets.add(rid)
            try:
                self._send_all(data, time.monotonic() + self.timeout)
            except PhysdError as e:
                with self._cond:
                    self._tickets.discard(rid)
                self._break(e if isinstance(e, ConnectionClosed) else ConnectionClosed(e.message))
                raise
        return rid

    def step_batch_recv(self, ticket):
        """The reply of step_batch_send's ``ticket``, as step_batch returns it (a BatchResult;
        an Error reply raises ServerError). Waits at most ``timeout`` seconds (Timeout; the
        ticket stays valid). A ticket is received once; tickets may be received in any
        order."""
        with self._req_lock:
            with self._cond:
                if ticket not in self._tickets:
                    raise ValueError("unknown or already received ticket %r" % (ticket,))
            deadline = time.monotonic() + self.timeout
            raw = self._wait_ticket(ticket, deadline)
            with self._cond:
                self._tickets.discard(ticket)
        return self._batch_result(raw, ticket)

    def _wait_ticket(self, ticket, deadline):
        """The reply body of an outstanding ticket: kept already, handed over by the reader
        thread, or read here (other tickets' replies kept, events dispatched, late replies of
        other requests discarded). Called under _req_lock."""
        if self._reader is not None:
            with self._cond:
                while ticket not in self._early and self._broken is None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Timeout("no reply within %.3f s" % self.timeout)
                    self._cond.wait(left)
                if ticket not in self._early:
                    raise ConnectionClosed("connection is closed: %s" % self._broken.message,
                                           self._broken.code)
                return self._early.pop(ticket)
        with self._cond:
            if ticket in self._early:
                return self._early.pop(ticket)
        return self._read_until(ticket, deadline)

    def _solver_options(self, field, options):
        """Protocol 1.6: a {name: value} dict into a repeated SolverOption field; refused here
        when the server speaks less than 1.6 (it would ignore them)."""
        if not options:
            return
        if (self.welcome.major, self.welcome.minor) < (1, 6):
            raise ValueError("solver options need protocol 1.6; the server speaks %d.%d"
                             % (self.welcome.major, self.welcome.minor))
        for name, value in options.items():
            o = field.add()
            o.name = str(name)
            o.value = float(value)

    def solver_options(self, solver):
        """Protocol 1.6: the options solver ``solver`` reads, as a list of SolverOptionInfo
        (name, summary, default_value, min, max, min_open, max_open, integer, values, range),
        from Welcome; empty from an older server or an unknown name."""
        for s in self.welcome.solvers:
            if s.name == solver:
                return list(s.options)
        return []

    def solvers(self):
        """Protocol 1.2: the server's contact solvers as a list of (name, summary) tuples, in
        the order of its table (from Welcome; empty from an older server)."""
        return [(s.name, s.summary) for s in self.welcome.solvers]

    def set_solver(self, name="", max_iterations=None, tolerance=None, options=None):
        """Protocol 1.2: SetSolver. Switch the contact solver (``name``; "" keeps it) and, when
        not None, its iteration cap and tolerance, between steps. Protocol 1.6: ``options``
        ({"canal.beta_scale": 30, ...}) sets options of the solver in force after the change.
        Returns SolverInUse (name, max_iterations, tolerance, and in 1.6 the options the solver
        reads). An unknown name or option, or an out-of-range value, raises ServerError with
        code INVALID_ARGUMENT naming it and changes nothing."""
        env = self._env()
        env.set_solver.name = name or ""
        if max_iterations is not None:
            env.set_solver.max_iterations = int(max_iterations)
            env.set_solver.has_max_iterations = True
        if tolerance is not None:
            env.set_solver.tolerance = float(tolerance)
            env.set_solver.has_tolerance = True
        self._solver_options(env.set_solver.options, options)
        return self._call(env, "solver_in_use").solver_in_use

    def model_info(self):
        """GetModelInfo -> ModelInfo."""
        env = self._env()
        env.get_model_info.SetInParent()
        return self._call(env, "model_info").model_info

    def add_body(self, geoms, pos=(0, 0, 0), quat=None, linvel=(0, 0, 0), angvel=(0, 0, 0),
                 mass=0.0, name=""):
        """AddBody -> the new body id. geoms: a list of dicts with keys type (GEOM_*), size,
        and optionally pos, quat, friction, density, condim."""
        env = self._env()
        ab = env.add_body
        ab.name = name
        _vec3(ab.pos, pos)
        if quat is not None:
            _quat(ab.quat, quat)
        _vec3(ab.linvel, linvel)
        _vec3(ab.angvel, angvel)
        ab.mass = mass
        for g in geoms:
            gs = ab.geoms.add()
            gs.type = g.get("type", GEOM_SPHERE)
            gs.size.extend(g["size"])
            _vec3(gs.pos, g.get("pos", (0, 0, 0)))
            if "quat" in g:
                _quat(gs.quat, g["quat"])
            if "friction" in g:
                gs.friction = g["friction"]
                gs.has_friction = True
            gs.density = g.get("density", 0.0)
            gs.condim = g.get("condim", 0)
        return self._call(env, "body_added").body_added.id

    def remove_body(self, body_id):
        env = self._env()
        env.remove_body.id = body_id
        self._call(env)

    def set_body_state(self, body_id, pos=None, quat=None, linvel=None, angvel=None):
        """SetBodyState; values left None keep the body's current ones.

        On a mocap body (ModelInfo's BodyInfo.is_mocap, protocol 1.4) it sets the pose the body
        is held at; linvel and angvel must then be None or zero (else INVALID_ARGUMENT)."""
        env = self._env()
        sb = env.set_body_state
        sb.id = body_id
        if pos is not None:
            _vec3(sb.pos, pos)
        if quat is not None:
            _quat(sb.quat, quat)
        if linvel is not None:
            _vec3(sb.linvel, linvel)
        if angvel is not None:
            _vec3(sb.angvel, angvel)
        self._call(env)

    def set_joint_command(self, joint_ids, mode=CMD_TORQUE, q=(), qd=(), tau=(), kp=(), kd=(),
                          seq=0):
        """Joint command for the next step boundary (the current engine has no joints:
        NOT_FOUND)."""
        env = self._env()
        self._fill_command(env.set_joint_command, joint_ids, mode, q, qd, tau, kp, kd, seq)
        self._call(env)

    def set_actuator_control(self, controls, seq=0):
        """SetActuatorControl (protocol 1.1): controls {actuator id or name: ctrl}, applied at
        the next step boundary and held; the whole request is rejected on any bad entry."""
        env = self._env()
        self._fill_actuators(env.set_actuator_control, controls, seq)
        self._call(env)

    def apply_wrench(self, body, force=(0, 0, 0), torque=(0, 0, 0)):
        """A wrench at the body's COM for the next step only."""
        env = self._env()
        _vec3(env.apply_wrench.force, force)
        _vec3(env.apply_wrench.torque, torque)
        env.apply_wrench.body = body
        self._call(env)

    def step(self, n=1):
        env = self._env()
        env.step.n = n
        self._call(env)

    def step_and_observe(self, n=1, wrenches=(), command=None, bodies=None, contacts=False,
                         stats=False, joints=(), actuators=None, actuator_forces=False,
                         sensors=False, actuator_seq=0):
        """The hot path: wrenches [(body, force, torque)], an optional command dict (the keyword
        arguments of set_joint_command), optional actuator controls {id or name: ctrl}, n steps
        -> StateFrame. joints: ids to observe (None = every joint, () = none)."""
        env = self._env()
        so = env.step_and_observe
        so.n = n
        for body, force, torque in wrenches:
            w = so.wrenches.add()
            w.body = body
            _vec3(w.force, force)
            _vec3(w.torque, torque)
        if command is not None:
            self._fill_command(so.command, **command)
        if actuators:
            self._fill_actuators(so.actuators, actuators, actuator_seq)
        self._selector(so.selector, bodies, contacts, stats, joints, actuator_forces, sensors)
        return self._call(env, "state").state

    def pause(self):
        env = self._env()
        env.pause.SetInParent()
        self._call(env)

    def resume(self):
        env = self._env()
        env.resume.SetInParent()
        self._call(env)

    def set_mode(self, mode, real_time_factor=0.0, barrier_deadline_ns=0,
                 deadline_policy=DEADLINE_WAIT):
        env = self._env()
        env.set_mode.mode = mode
        env.set_mode.real_time_factor = real_time_factor
        env.set_mode.barrier_deadline_ns = barrier_deadline_ns
        env.set_mode.deadline_policy = deadline_policy
        self._call(env)

    def set_real_time_factor(self, factor):
        env = self._env()
        env.set_real_time_factor.factor = factor
        self._call(env)

    def get_state(self, bodies=None, contacts=False, stats=False, joints=(), actuators=False,
                  sensors=False):
        """GetState -> StateFrame (bodies None: every body; joints None: every joint)."""
        env = self._env()
        self._selector(env.get_state.selector, bodies, contacts, stats, joints, actuators,
                       sensors)
        return self._call(env, "state").state

    def subscribe(self, callback, period_ns=0, bodies=None, contacts=False, stats=False,
                  joints=(), actuators=False, sensors=False):
        """Subscribe to state frames; callback(StateFrame) runs on the reader thread. Returns the
        subscription id. A callback that raises is reported (traceback on stderr, the exception
        kept in self.callback_error) and receives no more frames."""
        env = self._env()
        env.subscribe.period_ns = period_ns
        self._selector(env.subscribe.selector, bodies, contacts, stats, joints, actuators,
                       sensors)
        sid = self._call(env, "subscribed").subscribed.subscription_id
        with self._cb_lock:
            self._subs[sid] = callback
        with self._req_lock:
            if self._reader is None:
                self._reader = threading.Thread(target=self._reader_main, name="physd-reader",
                                                daemon=True)
                self._reader.start()
        return sid

    def unsubscribe(self, subscription_id):
        """After it returns the callback is not running and will not run again."""
        env = self._env()
        env.unsubscribe.subscription_id = subscription_id
        try:
            self._call(env)
        finally:
            with self._cb_lock:
                self._subs.pop(subscription_id, None)

    def reset(self):
        env = self._env()
        env.reset.SetInParent()
        self._call(env)

    def reset_to_keyframe(self, name=None, index=None):
        """1.3: back to the loaded state, then the model's keyframe `name` (or `index`):
        its joint positions, velocities and controls. ModelInfo.keyframes lists them."""
        env = self._env()
        if index is not None:
            env.reset_to_keyframe.index = int(index)
            env.reset_to_keyframe.has_index = True
        else:
            env.reset_to_keyframe.name = name or ""
        self._call(env)

    def set_joint_state(self, joints, qpos=(), qvel=()):
        """1.3: set joints directly. `joints`: ids (int) and/or file names (str); qpos holds
        each joint's JointInfo.nq values in order (empty: kept), qvel its nv values. Checked
        whole by the server: on error nothing changes."""
        kinds = {isinstance(j, int) for j in joints}
        if len(kinds) > 1:
            raise ValueError("set_joint_state: give joints all by id or all by name (qpos and "
                             "qvel follow their order)")
        env = self._env()
        m = env.set_joint_state
        m.joint_ids.extend(j for j in joints if isinstance(j, int))
        m.joint_names.extend(j for j in joints if not isinstance(j, int))
        m.qpos.extend(float(x) for x in qpos)
        m.qvel.extend(float(x) for x in qvel)
        self._call(env)

    def snapshot(self):
        """Snapshot -> bytes (opaque)."""
        env = self._env()
        env.snapshot.SetInParent()
        return self._call(env, "snapshot_data").snapshot_data.data

    def restore(self, data):
        env = self._env()
        env.restore.data = bytes(data)
        self._call(env)

    def get_stats(self):
        """GetStats -> Stats."""
        env = self._env()
        env.get_stats.SetInParent()
        return self._call(env, "stats").stats

    def join_barrier(self, order=0):
        env = self._env()
        env.join_barrier.order = order
        self._call(env)

    def leave_barrier(self):
        env = self._env()
        env.leave_barrier.SetInParent()
        self._call(env)
