#!/usr/bin/python3
"""test_gen_scenes.py - the scenes bench/gen_scenes.py writes into configs/worlds/ are its output.

Regenerates the committed quadruped drops (quadruped_drop_8, quadruped_drop_27), pouring
tasks (pour_9, pour_45) and the bolt and nut (bolt_nut) into a temporary directory and checks that each is byte for byte the
committed file (a hand edit, or a generator change without regenerating, fails here with the
first differing line); also that every other scene of the generator is written, that an unknown
name is a usage error (exit 2, naming it; pour_N outside 1 .. 150 too), that the drops hold what
their header says (robots, hinges with limits, three foot pads per leg, one servo per hinge),
and the pours theirs (the balls, two arms of seven hinges and a finger slide, one servo per
joint, SDF profiles for the bottle and the cup, keys pour_0, pour_1, ... at increasing times
with a control per servo; and pour_18, written on request), and the bolt and nut theirs (a
thread SDF, a non-convex nut mesh of the header's size, gap = margin).

    test_gen_scenes.py GEN_SCENES.PY WORLDS_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

COMMITTED = {"quadruped_drop_8": 8, "quadruped_drop_27": 27}
POURS = {"pour_9": 9, "pour_45": 45}
BOLT_NUT = "bolt_nut"


def check_bolt_nut(check, text):
    """The bolt and nut hold what their header says: a thread SDF on the bolt, the nut marked
    non-convex with as many vertices and triangles as the header counts, every index in range,
    and the nut's contacts acting at touch (gap = margin)."""
    thread = re.findall(r'<numeric name="physd:sdf_thread:bolt" data="([^"]+)"/>', text)
    mark = re.findall(r'<text name="physd:nonconvex" data="([^"]+)"/>', text)
    head = re.search(r"(\d+) vertices and (\d+) triangles", text)
    mesh = re.search(r'<mesh name="nut"\s+vertex="([^"]+)"\s+face="([^"]+)"/>', text)
    nv = len(mesh.group(1).split()) // 3 if mesh else -1
    idx = [int(i) for i in mesh.group(2).split()] if mesh else []
    geom = re.search(r'<geom name="nut" [^>]*margin="([^"]+)" gap="([^"]+)"/>', text)
    check(thread == ["0.048 0.005 0.06"] and mark == ["nut"] and head and mesh
          and nv == int(head.group(1)) and len(idx) == 3 * int(head.group(2))
          and min(idx) >= 0 and max(idx) < nv and geom and geom.group(1) == geom.group(2),
          f"bolt_nut: thread {thread}, non-convex {mark}, {nv} vertices and {len(idx) // 3} "
          "triangles as the header says, the nut's gap = margin")


def check_pour(check, name, text, balls):
    """The pouring task holds what its header says."""
    nball = len(re.findall(r'<body name="ball\d+" ', text))
    hinges = re.findall(r'<joint name="([LR])_\w+" axis=', text)
    slides = re.findall(r'<joint name="([LR])_finger" type="slide"', text)
    servos = re.findall(r'<general class="(?:arm|finger)" name="(\w+)" joint="(\w+)"/>', text)
    profiles = re.findall(r'<numeric name="physd:sdf:(\w+)" data="([^"]+)"/>', text)
    keys = re.findall(r'<key name="pour_(\d+)" time="([^"]+)" ctrl="([^"]+)"/>', text)
    times = [float(t) for _, t, _ in keys]
    check(nball == balls and hinges.count("L") == 7 and hinges.count("R") == 7
          and sorted(slides) == ["L", "R"] and len(servos) == 16
          and all(a == j for a, j in servos),
          f"{name}: {nball} balls, {len(hinges)} hinges, {len(slides)} finger slides, "
          f"{len(servos)} servos named after their joints")
    check(sorted(p for p, _ in profiles) == ["bottle", "cup"]
          and all(len(d.split()) % 2 == 1 for _, d in profiles),
          f"{name}: SDF profiles {[p for p, _ in profiles]}")
    check(len(keys) >= 3 and [int(k) for k, _, _ in keys] == list(range(len(keys)))
          and times[0] == 0 and all(a < b for a, b in zip(times, times[1:]))
          and all(len(c.split()) == len(servos) for _, _, c in keys),
          f"{name}: keys pour_0..pour_{len(keys) - 1} at {times} s, a control per servo")


def main():
    gen, worlds = sys.argv[1], sys.argv[2]
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + what)
        fails += 0 if cond else 1

    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run([sys.executable, gen, "--out", out], capture_output=True, text=True,
                             timeout=120)
        check(run.returncode == 0, f"gen_scenes.py writes every scene (exit {run.returncode})")
        written = sorted(os.listdir(out))
        names = list(COMMITTED) + list(POURS) + [BOLT_NUT]
        check(len(written) >= 9 and all(n + ".xml" in written for n in names),
              f"the drops and pours among the scenes written: {written}")
        for name in names:
            path = os.path.join(out, name + ".xml")
            if not os.path.exists(path):
                continue
            with open(path, encoding="ascii") as f:
                new = f.read()
            with open(os.path.join(worlds, name + ".xml"), encoding="ascii") as f:
                old = f.read()
            diff = next((i + 1 for i, (a, b) in enumerate(zip(new.splitlines(), old.splitlines()))
                         if a != b), None)
            check(new == old, f"{name}: configs/worlds copy is the generator's output"
                  + ("" if new == old else f" (first difference at line {diff}; rerun "
                     "bench/gen_scenes.py --out configs/worlds " + name + ")"))
            if name in POURS:
                check_pour(check, name, new, POURS[name])
                continue
            if name == BOLT_NUT:
                check_bolt_nut(check, new)
                continue
            robots = COMMITTED[name]
            joints = re.findall(r'<joint name="q\d+_\w+" axis="[01 ]+" range="(\S+) (\S+)"', new)
            pads = new.count('class="pad"') - 1  # one in <default>
            servos = len(re.findall(r'<general class="quad" name=', new))
            trunks = len(re.findall(r'<body name="q\d+" pos=', new))
            check(trunks == robots and len(joints) == 12 * robots and servos == 12 * robots
                  and pads == 12 * robots and all(float(a) < 0 < float(b) for a, b in joints),
                  f"{name}: {trunks} robots, {len(joints)} limited hinges, {servos} servos, "
                  f"{pads} foot pads")
        bad = subprocess.run([sys.executable, gen, "--out", out, "quadruped_drop_9"],
                             capture_output=True, text=True, timeout=60)
        check(bad.returncode == 2 and "quadruped_drop_9" in bad.stderr,
              f"an unknown scene is a usage error naming it (exit {bad.returncode})")
        for n in ("pour_0", "pour_151", "pour_x"):
            bad = subprocess.run([sys.executable, gen, "--out", out, n], capture_output=True,
                                 text=True, timeout=60)
            check(bad.returncode == 2 and n in bad.stderr,
                  f"{n} is a usage error naming it (exit {bad.returncode})")
        run = subprocess.run([sys.executable, gen, "--out", out, "pour_18"], capture_output=True,
                             text=True, timeout=60)
        with open(os.path.join(out, "pour_18.xml"), encoding="ascii") as f:
            check_pour(check, "pour_18", f.read(), 18)
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
