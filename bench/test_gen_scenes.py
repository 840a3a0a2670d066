#!/usr/bin/python3
"""test_gen_scenes.py - the scenes bench/gen_scenes.py writes into configs/worlds/ are its output.

Regenerates the committed quadruped drops (quadruped_drop_8, quadruped_drop_27) into a
temporary directory and checks that each is byte for byte the committed file (a hand edit, or a
generator change without regenerating, fails here with the first differing line); also that
every other scene of the generator is written, that an unknown name is a usage error (exit 2,
naming it), and that the drops hold what their header says (robots, hinges with limits, three
foot pads per leg, one servo per hinge).

    test_gen_scenes.py GEN_SCENES.PY WORLDS_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

COMMITTED = {"quadruped_drop_8": 8, "quadruped_drop_27": 27}


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
        check(len(written) >= 7 and all(n + ".xml" in written for n in COMMITTED),
              f"the drops among the scenes written: {written}")
        for name, robots in COMMITTED.items():
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
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
