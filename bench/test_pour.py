#!/usr/bin/python3
"""test_pour.py - pourbench and pour.py end to end, briefly (0.3 s of the pouring task).

pourbench on configs/worlds/pour_9.xml prints one JSON object with the task's figures (9 balls,
72 steps, the paper's budget when asked, a finite residual and penetration, the grip measured);
an unknown solver is a usage error (exit 2) naming it; a scene without the task's bodies
(dish_pile.xml) fails to start (exit 1) naming the bottle. pour.py runs two solvers on one count,
exits 0 and prints its JSON (the paper's claims, MuJoCo's reason) and both tables.

    test_pour.py POURBENCH POUR.PY WORLDS_DIR BUILD_DIR
"""
import json
import math
import os
import subprocess
import sys


def main():
    pourbench, pour_py, worlds, build = sys.argv[1:5]
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + what)
        fails += 0 if cond else 1

    scene = os.path.join(worlds, "pour_9.xml")
    run = subprocess.run([pourbench, scene, "--solver", "canal", "--iterations", "5",
                          "--tolerance", "0", "--seconds", "0.3"], capture_output=True,
                         text=True, timeout=120)
    j = json.loads(run.stdout) if run.returncode == 0 else {}
    check(run.returncode == 0 and j.get("balls") == 9 and j.get("steps") == 72
          and j.get("solver") == "canal" and j.get("iterations_cap") == 5
          and math.isfinite(j.get("residual_mean", math.nan))
          and 0 <= j.get("penetration_max", -1) < 1e-3 and "grip_drift_max" in j,
          f"pourbench: canal at 5 iterations, 9 balls, 72 steps (exit {run.returncode}): "
          f"{run.stdout.strip()[:160]}")
    bad = subprocess.run([pourbench, scene, "--solver", "nosuch"], capture_output=True,
                         text=True, timeout=60)
    check(bad.returncode == 2 and "nosuch" in bad.stderr,
          f"an unknown solver is a usage error naming it (exit {bad.returncode})")
    other = subprocess.run([pourbench, os.path.join(worlds, "dish_pile.xml")],
                           capture_output=True, text=True, timeout=60)
    check(other.returncode == 1 and "bottle" in other.stderr,
          f"a scene without the task's bodies fails naming the bottle (exit {other.returncode}:"
          f" {other.stderr.strip()[:120]})")
    table = subprocess.run([sys.executable, pour_py, "--build-dir", build, "--balls", "9",
                            "--others-balls", "", "--solvers", "subadmm,pgs", "--seconds",
                            "0.3"], capture_output=True, text=True, timeout=300)
    doc = {}
    if table.returncode == 0:
        doc = json.JSONDecoder().raw_decode(table.stdout)[0]
    check(table.returncode == 0 and len(doc.get("cells", [])) == 2 and "paper" in doc
          and "SDF" in doc.get("mujoco", "") and "| claim (paper 002, Fig. 11) |" in table.stdout
          and "| subadmm | 100 it. | 9 |" in table.stdout,
          f"pour.py: two solvers, one count, both tables (exit {table.returncode}; "
          f"{table.stderr.strip()[-200:]})")
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
