#!/usr/bin/env python3
"""test_viewer_page.py - the viewer's browser page (web/, served by server/viewer_http.c) drawn
by a real browser: headless Chromium (Debian's chromium) opens http://127.0.0.1:PORT/ on a
known world with a fixed camera and unlit colours (URL arguments cam, look, fov, flat=1,
hud=0) and takes a screenshot; the test then projects each body's centre with the same camera
and checks the pixel there has that body's colour as /scene gives it (the box orange, the
sphere blue, the cylinder green, each within 10 of 255 per channel), that a point just beyond
each body is not its colour (so each is where it should be, not merely somewhere), and that
the floor and the sky show theirs. Nothing but the page, three.js and the daemon is involved;
the page speaks foxglove.websocket.v1 to the daemon.

Usage: test_viewer_page.py [--save PNG]  (PHYSD_BIN names the daemon; --save keeps the shot)
Exit status: 0 pass, 1 fail, 77 skip (no chromium: never a pass).
"""
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

PHYSD = os.environ.get("PHYSD_BIN", "build/server/physd")
W, H = 800, 600
CAM, LOOK, FOV = (0.0, -4.0, 2.0), (0.0, 0.0, 0.3), 50.0
WORLD = """<mujoco model="viewer_page">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1"/>
    <body name="box" pos="-0.8 0 0.3"><freejoint/><geom type="box" size="0.25 0.25 0.25"/></body>
    <body name="ball" pos="0.8 0 0.3"><freejoint/><geom type="sphere" size="0.3"/></body>
    <body name="post" pos="0 0.8 0.4"><freejoint/><geom type="cylinder" size="0.2 0.4"/></body>
  </worldbody>
</mujoco>
"""
# body: centre, a radius around it that is inside its silhouette, one just outside, and its
# colour (server/viewer_enc.c's palette by body id: 0 orange, 1 blue, 2 green)
BODIES = {
    "box": ((-0.8, 0.0, 0.3), 0.18, 0.45, (0.89, 0.47, 0.20)),
    "sphere": ((0.8, 0.0, 0.3), 0.18, 0.45, (0.25, 0.55, 0.85)),
    "cylinder": ((0.0, 0.8, 0.4), 0.12, 0.35, (0.35, 0.70, 0.35)),
}
FLOOR = (0.55, 0.6, 0.65)
SKY = (0x1E / 255, 0x22 / 255, 0x27 / 255)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pycheck  # noqa: E402
from pycheck import check, free_port  # noqa: E402


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG"""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "PNG colour type %d depth %d" % (ctype, depth)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def sub(a, b):
    return [a[i] - b[i] for i in range(3)]


def norm(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return sum(a[i] * b[i] for i in range(3))


def project(p):
    """pixel (x, y) of world point p with the page's camera (z up, vertical fov FOV)"""
    fwd = norm(sub(LOOK, CAM))
    right = norm(cross(fwd, (0, 0, 1)))
    up = cross(right, fwd)
    d = sub(p, CAM)
    depth = dot(d, fwd)
    f = 1 / math.tan(math.radians(FOV) / 2)
    xn = f / (W / H) * dot(d, right) / depth
    yn = f * dot(d, up) / depth
    return (xn + 1) / 2 * W, (1 - yn) / 2 * H


def near(px, colour, tol=10):
    return all(abs(px[i] - round(colour[i] * 255)) <= tol for i in range(3))


def main():
    save = sys.argv[sys.argv.index("--save") + 1] if "--save" in sys.argv else None
    chromium = find_chromium()
    if not chromium:
        print("SKIP: no chromium (apt-get install chromium)")
        return 77
    tmp = tempfile.mkdtemp(prefix="physd-page-")
    world = os.path.join(tmp, "world.xml")
    with open(world, "w") as f:
        f.write(WORLD)
    port = free_port()
    log_path = os.path.join(tmp, "physd.log")
    log = open(log_path, "w")
    # lock-step (the default) and no client stepping: the bodies stay where the file puts them
    d = subprocess.Popen([PHYSD, "--socket", os.path.join(tmp, "s.sock"), "--viewer", str(port),
                          "--world", world], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            if "viewer listening" in open(log_path).read() or d.poll() is not None:
                break
            time.sleep(0.05)
        check("viewer page" in open(log_path).read(), "the daemon found the page's files")
        shot = os.path.join(tmp, "shot.png")
        url = ("http://127.0.0.1:%d/?cam=%s&look=%s&fov=%g&flat=1&hud=0"
               % (port, ",".join(map(str, CAM)), ",".join(map(str, LOOK)), FOV))
        t0 = time.monotonic()
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                            "--hide-scrollbars", "--user-data-dir=" + os.path.join(tmp, "profile"),
                            "--window-size=%d,%d" % (W, H), "--virtual-time-budget=5000",
                            "--screenshot=" + shot, url],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        print("chromium: exit %d after %.1f s" % (r.returncode, time.monotonic() - t0))
        check(os.path.exists(shot), "chromium wrote a screenshot")
        if not os.path.exists(shot):
            print(r.stdout.decode(errors="replace")[-2000:])
            return 1
        if save:
            shutil.copyfile(shot, save)
        w, h, px = read_png(shot)
        check((w, h) == (W, H), "the screenshot is %dx%d" % (w, h))
        for name, (c, r_in, r_out, colour) in BODIES.items():
            x, y = project(c)
            at = px[int(round(y))][int(round(x))]
            check(near(at, colour), "%s: the pixel at its centre (%d, %d) is %s, its colour %s"
                  % (name, x, y, at, tuple(round(v * 255) for v in colour)))
            # a little inside, around the centre: still the body
            inside = [project((c[0] + dx, c[1], c[2] + dz))
                      for dx, dz in ((r_in, 0), (-r_in, 0), (0, r_in), (0, -r_in))]
            check(all(near(px[int(round(q[1]))][int(round(q[0]))], colour) for q in inside),
                  "%s: points %.2f m around its centre are its colour too" % (name, r_in))
            # just beyond it, left and right: not the body (it is where it should be, not bigger)
            out = [project((c[0] + dx, c[1], c[2])) for dx in (r_out, -r_out)]
            check(all(not near(px[int(round(q[1]))][int(round(q[0]))], colour) for q in out),
                  "%s: %.2f m to either side is not its colour" % (name, r_out))
        fx, fy = project((0.0, -1.5, 0.0))
        check(near(px[int(fy)][int(fx)], FLOOR), "the floor in front is the plane's grey: %s"
              % (px[int(fy)][int(fx)],))
        check(near(px[5][W // 2], SKY), "the top is the background: %s" % (px[5][W // 2],))
    finally:
        d.send_signal(signal.SIGTERM)
        rc = d.wait(20)
        log.close()
        check(rc == 0, "the daemon exits 0 (%d)" % rc)
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % pycheck.failures)
    return 1 if pycheck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
