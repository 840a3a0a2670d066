#!/usr/bin/env python3
"""test_viewer_conformance.py - physd's Foxglove WebSocket viewer (docs/viewer.md) from an
independent client: Python's `websockets` (Debian's python3-websockets), not libwebsockets.

It starts the daemon (PHYSD_BIN) with --viewer on a free port and checks:
  - the page: GET / is the HTML page, GET /three/three.min.js is three.js, an unknown path 404;
    --viewer-web-dir names the page's folder: one without index.html stops the start naming it,
    one with it is served;
  - serverInfo (name, capabilities time and services, supportedEncodings json), advertise (the
    /tf and /scene JSON channels with JSON schemas, /physd/state protobuf with a base64
    FileDescriptorSet when present) and advertiseServices (the four controls);
  - subscribe: /scene brings an entity per body with geoms, /tf the body transforms;
  - frames at the asked rate: in real time with viewer_period_ms 50 and viewer_max_fps 0 (the
    wall-time limit, tested below, defers a publication that falls due within 1/60 s of the last
    one, as real time's catch-up steps do on a loaded machine, and a deferred one shows the newest
    state, off the period grid), every /tf log time is a whole multiple of 50 ms of simulation
    time but for at most one (the first publication after the viewer connected comes at the
    next step), consecutive ones are whole periods apart
    (never closer), and over ~2 s at least 60 % of the periods have a frame;
  - timestamps in simulation time: each frame's log time equals the `time` message before it
    and the transforms' own timestamp, is a whole number of timesteps, and after a pause
    through the /physd/pause service no log time is beyond the sim time the service answered;
  - at most viewer_max_fps frames a second of wall time: in max-speed mode with
    viewer_period_ms 1 (a frame due every step) and the default viewer_max_fps 60, a viewer
    gets /tf frames at 20 to 66 a second over 2 s, their log times advancing;
  - latest wins for a slow viewer (max-speed mode, viewer_period_ms 1, viewer_max_fps 0): a viewer that does not
    read for 3 s gets, once it reads again, a frame at least as new as the newest a fast viewer
    had when it woke, and the daemon's log shows it was sent fewer frames than the fast one
    and dropped some;
  - bad clients close only themselves: a wrong subprotocol is refused at the handshake, bytes
    that are not WebSocket framing and a message over 64 KiB close that connection, while
    another viewer keeps receiving frames; a JSON text that is not a request only gets an
    error status and the connection stays.
Exit status: 0 pass, 1 fail, 77 skip (python3-websockets missing: never a pass).
"""
import asyncio
import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    import websockets
except ImportError:
    print("SKIP: python3-websockets is not installed (apt-get install python3-websockets)")
    sys.exit(77)

SUB = "foxglove.websocket.v1"
PHYSD = os.environ.get("PHYSD_BIN", "build/server/physd")
WORLDS = sys.argv[1] if len(sys.argv) > 1 else "configs/worlds"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pycheck  # noqa: E402
from pycheck import check, free_port  # noqa: E402


class Daemon:
    """physd with a viewer port, its log in a temp dir"""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="physd-conf-")
        self.port = free_port()
        self.log_path = os.path.join(self.dir, "log")
        self.log = open(self.log_path, "w")
        cmd = [PHYSD, "--socket", os.path.join(self.dir, "s.sock"), "--viewer", str(self.port)]
        self.proc = subprocess.Popen(cmd + list(args), stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(100):
            if "viewer listening" in self.text():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("physd did not start: " + self.text())

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def url(self, path="/"):
        return "ws://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(20)
        self.log.close()
        check(rc == 0, "the daemon exits 0 on SIGTERM (rc %s)" % rc)
        shutil.rmtree(self.dir, ignore_errors=True)  # kept, with its log, when a check failed


def parse_bin(m):
    """(opcode, fields): message data (1) -> (sub id, log ns, payload); time (2) -> ns;
    service response (3) -> (service, call, encoding, payload)"""
    op = m[0]
    if op == 1:
        sub, ns = struct.unpack_from("<IQ", m, 1)
        return op, (sub, ns, m[13:])
    if op == 2:
        return op, struct.unpack_from("<Q", m, 1)[0]
    if op == 3:
        svc, call, elen = struct.unpack_from("<III", m, 1)
        return op, (svc, call, m[13:13 + elen].decode(), m[13 + elen:])
    return op, None


async def hello(ws):
    """serverInfo, advertise, advertiseServices -> (info, channels by topic, services by name)"""
    msgs = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(3)]
    by_op = {m["op"]: m for m in msgs}
    chans = {c["topic"]: c for c in by_op.get("advertise", {}).get("channels", [])}
    svcs = {s["name"]: s for s in by_op.get("advertiseServices", {}).get("services", [])}
    return by_op.get("serverInfo", {}), chans, svcs


async def call(ws, svc_id, call_id, args=b""):
    await ws.send(struct.pack("<BIII", 2, svc_id, call_id, 4) + b"json" + args)
    while True:
        m = await asyncio.wait_for(ws.recv(), 5)
        if isinstance(m, bytes) and m[0] == 3:
            _, (svc, cid, enc, payload) = parse_bin(m)
            if cid == call_id:
                return json.loads(payload)
        elif isinstance(m, str):
            j = json.loads(m)
            if j.get("op") == "serviceCallFailure" and j.get("callId") == call_id:
                raise RuntimeError(j["message"])


def test_page(d):
    with urllib.request.urlopen("http://127.0.0.1:%d/" % d.port, timeout=5) as r:
        body = r.read().decode()
        check(r.status == 200 and "text/html" in r.headers.get("content-type", ""),
              "GET / is an HTML page")
        check("viewer.js" in body and "/three/three.min.js" in body,
              "the page loads viewer.js and three.js from physd itself")
    with urllib.request.urlopen("http://127.0.0.1:%d/three/three.min.js" % d.port, timeout=5) as r:
        n = len(r.read())
        check(r.status == 200 and n > 100000, "GET /three/three.min.js is three.js (%d bytes)" % n)
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/no-such-file" % d.port, timeout=5)
        check(False, "an unknown path is 404")
    except urllib.error.HTTPError as e:
        check(e.code == 404, "an unknown path is 404 (%d)" % e.code)


async def test_protocol_and_rate(d):
    async with websockets.connect(d.url(), subprotocols=[SUB], max_size=None) as ws:
        check(ws.subprotocol == SUB, "the server speaks " + SUB)
        info, chans, svcs = await hello(ws)
        check(info.get("name", "").startswith("physd"), "serverInfo names physd")
        check({"time", "services"} <= set(info.get("capabilities", [])),
              "capabilities include time and services: %s" % info.get("capabilities"))
        check("json" in info.get("supportedEncodings", []), "supportedEncodings has json")
        check(set(chans) >= {"/tf", "/scene"}, "advertise lists /tf and /scene: %s" % list(chans))
        for t, schema_name in (("/tf", "foxglove.FrameTransforms"), ("/scene", "foxglove.SceneUpdate")):
            c = chans.get(t, {})
            ok = c.get("encoding") == "json" and c.get("schemaName") == schema_name
            try:
                ok = ok and isinstance(json.loads(c["schema"]), dict) and c.get("schemaEncoding") == "jsonschema"
            except (KeyError, ValueError):
                ok = False
            check(ok, "%s: json, %s, a JSON schema" % (t, schema_name))
        if "/physd/state" in chans:
            c = chans["/physd/state"]
            raw = base64.b64decode(c["schema"])
            check(c["encoding"] == "protobuf" and b"StateFrame" in raw and b"physd.proto" in raw,
                  "/physd/state: protobuf with a FileDescriptorSet of physd.proto")
        check(set(svcs) == {"/physd/pause", "/physd/resume", "/physd/step", "/physd/reset"},
              "advertiseServices lists the four controls: %s" % sorted(svcs))

        await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
            {"id": 10, "channelId": chans["/tf"]["id"]}, {"id": 11, "channelId": chans["/scene"]["id"]}]}))
        period = 50_000_000
        timestep = 2_000_000
        tf_times, scene, last_time, mismatch, not_step, own_ts = [], None, None, 0, 0, 0
        t_end = time.monotonic() + 2.0
        while time.monotonic() < t_end:
            m = await asyncio.wait_for(ws.recv(), 5)
            if isinstance(m, str):
                continue
            op, f = parse_bin(m)
            if op == 2:
                last_time = f
            elif op == 1 and f[0] == 11:
                scene = json.loads(f[2])
            elif op == 1 and f[0] == 10:
                sub, ns, payload = f
                tf = json.loads(payload)
                ts = tf["transforms"][0]["timestamp"]
                own_ts += ts["sec"] * 1_000_000_000 + ts["nsec"] == ns
                mismatch += last_time is not None and last_time != ns
                not_step += ns % timestep != 0
                tf_times.append(ns)
        check(scene is not None and len(scene.get("entities", [])) >= 2,
              "/scene: entities for the bodies and the world")
        check(len(tf_times) > 5, "/tf frames came (%d)" % len(tf_times))
        # the first frame is the newest at subscription time (any step); then one per period
        aligned = [t for t in tf_times if t % period == 0]
        gaps = [b - a for a, b in zip(aligned, aligned[1:])]
        check(len(tf_times) - len(aligned) <= 1 and tf_times[2:] == aligned[-len(tf_times[2:]):],
              "every /tf log time but the first publication's is a whole multiple of the period "
              "(%d of %d)" % (len(aligned), len(tf_times)))
        check(all(g >= period and g % period == 0 for g in gaps),
              "consecutive /tf log times are whole periods (50 ms) of sim time apart: %s"
              % sorted(set(gaps))[:6])
        span = tf_times[-1] - tf_times[0] if tf_times else 0
        check(span > 0 and (len(tf_times) - 1) >= 0.6 * span / period,
              "frames at the asked rate: %d frames over %.2f s of sim time (%.1f per period)"
              % (len(tf_times), span / 1e9, (len(tf_times) - 1) / max(1, span / period)))
        check(mismatch == 0, "each frame's log time equals the `time` message before it")
        check(own_ts == len(tf_times), "log times equal the transforms' own timestamps")
        check(not_step == 0 and tf_times[-1] < 3600 * 10**9,
              "log times are whole timesteps of simulation time, not wall time (last %d ns)"
              % tf_times[-1])
        r = await call(ws, svcs["/physd/pause"]["id"], 1)
        paused_at = r["sim_time_ns"]
        check(r["paused"], "the pause service pauses (sim time %d ns)" % paused_at)
        later = []
        try:
            while True:
                m = await asyncio.wait_for(ws.recv(), 0.5)
                if isinstance(m, bytes) and m[0] in (1, 2):
                    op, f = parse_bin(m)
                    later.append(f if op == 2 else f[1])
        except asyncio.TimeoutError:
            pass
        check(all(t <= paused_at for t in later + tf_times),
              "paused: no log time beyond the paused sim time")
        await call(ws, svcs["/physd/resume"]["id"], 2)


async def test_wall_rate(d):
    ws = await websockets.connect(d.url(), subprotocols=[SUB], max_size=None)
    _, chans, _ = await hello(ws)
    await ws.send(json.dumps({"op": "subscribe",
                              "subscriptions": [{"id": 1, "channelId": chans["/tf"]["id"]}]}))
    # the first frame, then count for 2 s of wall time
    while True:
        m = await asyncio.wait_for(ws.recv(), 5)
        if isinstance(m, bytes) and m[0] == 1:
            break
    times = []
    t_end = time.monotonic() + 2.0
    while time.monotonic() < t_end:
        m = await asyncio.wait_for(ws.recv(), 5)
        if isinstance(m, bytes) and m[0] == 1:
            times.append(parse_bin(m)[1][1])
    rate = len(times) / 2.0
    check(20 <= rate <= 66,
          "max speed, a frame due every step: %.0f /tf frames a second of wall time "
          "(viewer_max_fps 60)" % rate)
    check(all(b > a for a, b in zip(times, times[1:])), "their log times advance")
    await ws.close()


async def test_slow_viewer(d):
    fast = await websockets.connect(d.url(), subprotocols=[SUB], max_size=None)
    # the slow one: the library stops reading from the socket after one queued message, and its
    # socket has a small receive buffer (set before connecting, so the window stays small and
    # the daemon's send buffer does not grow to megabytes): what the daemon cannot write for 3 s
    # must be dropped, not queued, however few frames a loaded machine produces meanwhile
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", d.port))
    slow = await websockets.connect(d.url(), subprotocols=[SUB], max_size=None, max_queue=1,
                                    read_limit=4096, sock=sock)
    chans = {}
    for ws in (fast, slow):
        _, chans, _ = await hello(ws)
        subs = [{"id": 1, "channelId": chans["/tf"]["id"]}, {"id": 2, "channelId": chans["/scene"]["id"]}]
        if "/physd/state" in chans:
            subs.append({"id": 3, "channelId": chans["/physd/state"]["id"]})
        await ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
    newest_fast = 0
    t_end = time.monotonic() + 3.0
    while time.monotonic() < t_end:  # the slow one does not read meanwhile
        m = await asyncio.wait_for(fast.recv(), 5)
        if isinstance(m, bytes) and m[0] == 1:
            newest_fast = max(newest_fast, parse_bin(m)[1][1])
    # the slow one reads again: a queue would hand it its 3 s backlog in order; latest wins
    # hands it, behind what its socket buffers already held, frames newer than this
    wake = newest_fast
    newest_slow = 0
    t_end = time.monotonic() + 2.0
    while time.monotonic() < t_end and newest_slow < wake:
        m = await asyncio.wait_for(slow.recv(), 5)
        if isinstance(m, bytes) and m[0] == 1:
            newest_slow = max(newest_slow, parse_bin(m)[1][1])
    check(newest_slow >= wake,
          "latest wins: reading again, the slow viewer soon gets a frame (%.3f s) at least as new "
          "as the fast one had when it woke (%.3f s)" % (newest_slow / 1e9, wake / 1e9))
    # drop the connections (a close handshake would wait behind the unread frames)
    slow.transport.abort()
    lines = []
    for _ in range(50):
        lines = re.findall(r'viewer disconnected" frames=(\d+) dropped=(\d+)', d.text())
        if lines:
            break
        await asyncio.sleep(0.1)
    fast.transport.abort()
    for _ in range(50):
        lines = re.findall(r'viewer disconnected" frames=(\d+) dropped=(\d+)', d.text())
        if len(lines) >= 2:
            break
        await asyncio.sleep(0.1)
    check(len(lines) == 2, "both viewers' disconnections are logged with their counts: %s" % lines)
    if len(lines) == 2:
        (sf, sd), (ff, fd) = [(int(a), int(b)) for a, b in lines]
        check(sd > 0 and sf < ff,
              "the slow viewer's frames were dropped, not queued: it was sent %d and dropped %d, "
              "the fast one was sent %d (dropped %d)" % (sf, sd, ff, fd))


def raw_handshake(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n"
               % (port, key, SUB)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    return s, head


def close_frame_then_eof(s, seconds, buf=b""):
    """Read the server's frames on raw socket s (buf: bytes already read after the handshake)
    until it closes the TCP connection or `seconds` pass; returns (the status code of a Close
    frame the server sent, or None; whether the connection reached EOF; whether it ended in a
    reset). The server answers a protocol error with a Close frame and closes the socket when the
    peer acknowledges it or when libwebsockets' close-ack wait (5 s) runs out."""
    s.settimeout(0.2)
    end = time.monotonic() + seconds
    code, eof, reset = None, False, False
    while time.monotonic() < end and not eof:
        try:
            chunk = s.recv(65536)
            eof = chunk == b""
            buf += chunk
        except socket.timeout:
            continue
        except OSError:
            eof = reset = True
        # server frames are unmasked: opcode, length (7, 16 or 64 bits), payload
        while len(buf) >= 2:
            n, at = buf[1] & 0x7F, 2
            if n == 126:
                if len(buf) < 4:
                    break
                n, at = struct.unpack(">H", buf[2:4])[0], 4
            elif n == 127:
                if len(buf) < 10:
                    break
                n, at = struct.unpack(">Q", buf[2:10])[0], 10
            if len(buf) < at + n:
                break
            if buf[0] & 0x0F == 0x8:
                payload = buf[at:at + n]
                code = struct.unpack(">H", payload[:2])[0] if n >= 2 else 1005
            buf = buf[at + n:]
    return code, eof, reset


async def still_receives(ws, what):
    got = 0
    t_end = time.monotonic() + 1.0
    while time.monotonic() < t_end and got < 3:
        m = await asyncio.wait_for(ws.recv(), 5)
        got += isinstance(m, bytes) and m[0] == 1
    check(got >= 3, "another viewer keeps receiving frames after " + what)


async def test_bad_clients(d):
    good = await websockets.connect(d.url(), subprotocols=[SUB], max_size=None)
    _, chans, _ = await hello(good)
    await good.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": chans["/tf"]["id"]}]}))
    # a wrong subprotocol: refused at the handshake
    try:
        async with websockets.connect(d.url(), subprotocols=["not.foxglove"]) as bad:
            refused = bad.subprotocol != "not.foxglove"
    except (websockets.exceptions.InvalidHandshake, ConnectionError, OSError):
        refused = True
    check(refused, "a wrong subprotocol is refused")
    await still_receives(good, "a wrong subprotocol")
    # bytes that are not WebSocket framing (an unmasked frame with a reserved opcode)
    s, head = raw_handshake(d.port)
    check(head.startswith(b"HTTP/1.1 101"), "a raw client's handshake is accepted")
    s.sendall(b"\x8f\x7f" + b"\xff" * 200)
    code, eof, reset = close_frame_then_eof(s, 10, head.split(b"\r\n\r\n", 1)[1])
    # a Close frame with 1002, or none: when more of the garbage is read before the Close
    # frame could be written, libwebsockets closes at once (seen once in CI's sanitizer run
    # under load: no frame, the connection closed within the window; 10 of 10 runs here, some
    # with the garbage sent in two parts, gave 1002); what physd owes is that this connection
    # closes and the others go on (below)
    check(code in (1002, None),
          "garbage framing is answered with a Close frame with 1002 protocol error, or closed "
          "at once (code %s, reset %s)" % (code, reset))
    check(eof, "... and the connection is closed (within the 5 s close-ack wait)")
    s.close()
    await still_receives(good, "garbage framing")
    # a JSON text that is no request: an error status, the connection stays
    bad = await websockets.connect(d.url(), subprotocols=[SUB], max_size=None)
    await hello(bad)
    await bad.send("{not json")
    status = None
    while status is None:
        m = await asyncio.wait_for(bad.recv(), 5)
        if isinstance(m, str) and json.loads(m).get("op") == "status":
            status = json.loads(m)
    check(status.get("level") == 2, "a text that is not JSON gets an error status: %s" % status.get("message"))
    await bad.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": 7, "channelId": chans["/tf"]["id"]}]}))
    got = False
    t_end = time.monotonic() + 3
    while not got and time.monotonic() < t_end:
        m = await asyncio.wait_for(bad.recv(), 5)
        got = isinstance(m, bytes) and m[0] == 1 and parse_bin(m)[1][0] == 7
    check(got, "... and that connection still works")
    # oversize: that connection is closed with 1009
    await bad.send("x" * (100 * 1024))
    code = None
    try:
        while True:
            await asyncio.wait_for(bad.recv(), 5)
    except websockets.exceptions.ConnectionClosed as e:
        code = e.rcvd.code if e.rcvd else None
    except asyncio.TimeoutError:
        pass
    check(code == 1009, "a message over 64 KiB closes that connection with 1009 (%s)" % code)
    await still_receives(good, "an oversize message")
    good.transport.abort()  # a close handshake would wait behind the unread frames


def test_web_dir():
    """viewer_web_dir: a folder without index.html stops the start naming it; one with it is
    what GET / serves"""
    tmp = tempfile.mkdtemp(prefix="physd-web-")
    port = free_port()
    r = subprocess.run([PHYSD, "--socket", os.path.join(tmp, "s.sock"), "--viewer", str(port),
                        "--viewer-web-dir", tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=20)
    out = r.stdout.decode()
    check(r.returncode != 0 and "viewer_web_dir has no readable index.html" in out and tmp in out,
          "a viewer_web_dir without index.html stops the start, naming it (exit %d)" % r.returncode)
    with open(os.path.join(tmp, "index.html"), "w") as f:
        f.write("<html>my page</html>")
    d = Daemon("--viewer-web-dir", tmp)
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/" % d.port, timeout=5) as resp:
            check(resp.read() == b"<html>my page</html>", "GET / serves viewer_web_dir's index.html")
        check("web_dir=%s " % tmp in d.text(), "the page's folder is logged")
    finally:
        d.stop()
    shutil.rmtree(tmp, ignore_errors=True)


async def main():
    test_web_dir()
    world = os.path.join(WORLDS, "boxes20.xml")
    d = Daemon("--world", world, "--mode", "realtime", "--viewer-period-ms", "50",
               "--viewer-max-fps", "0")
    try:
        test_page(d)
        await test_protocol_and_rate(d)
        await test_bad_clients(d)
    finally:
        d.stop()
    d = Daemon("--world", world, "--mode", "max", "--viewer-period-ms", "1")
    try:
        await test_wall_rate(d)
    finally:
        d.stop()
    d = Daemon("--world", world, "--mode", "max", "--viewer-period-ms", "1",
               "--viewer-max-fps", "0")
    try:
        await test_slow_viewer(d)
    finally:
        d.stop()


if __name__ == "__main__":
    asyncio.run(main())
    print("%d failure(s)" % pycheck.failures)
    sys.exit(1 if pycheck.failures else 0)
