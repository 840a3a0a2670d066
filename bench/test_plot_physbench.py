#!/usr/bin/env python3
"""test_plot_physbench.py - physbench --series and its plot (a meson test).

    test_plot_physbench.py PHYSBENCH PLOT_SCRIPT

Runs physbench on a built-in stack with --series --trace --json and checks: the three series
hold one value per timed step, in step order (their median equals the reported median; the
residuals never exceed the reported worst; the iterations never exceed the reported most); the
plot script writes a PNG of three panels (its size in pixels from the PNG header); a JSON
without --series is refused with exit 1 naming the flag. Exit 77 (SKIP) when matplotlib is
missing: the plot is then not checked, never passed.
"""
import json
import math
import os
import statistics
import struct
import subprocess
import sys
import tempfile


def main():
    exe, plot = sys.argv[1], sys.argv[2]
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + what)
        fails += 0 if cond else 1

    steps = 60
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([exe, "builtin:box_stack_10", "--steps", str(steps), "--warmup", "20",
                              "--threads", "1", "--series", "--trace", "--json"],
                             capture_output=True, text=True, timeout=300)
        check(run.returncode == 0, f"physbench exits 0 ({run.returncode}: {run.stderr[-300:]})")
        d = json.loads(run.stdout)
        for key in ("step_ms", "step_residual", "step_iterations", "step_penetration"):
            check(len(d.get(key, [])) == steps, f"{key} has {steps} values")
        # physbench prints 9 significant digits: the median of the printed values (the mean of
        # the two middle ones) may differ from the printed median in the last digit
        check(math.isclose(statistics.median(d["step_ms"]), d["ms_per_step_median"],
                           rel_tol=1e-8),
              "the series' median is the reported median (to the 9 digits printed)")
        check(max(d["step_residual"]) == d["residual_max"], "the worst residual is the series' max")
        check(max(d["step_iterations"]) == d["iterations_max"], "the most iterations is the series' max")
        check(max(d["step_penetration"]) == d["penetration_max_m"],
              "the deepest penetration is the series' max")
        path = os.path.join(tmp, "run.json")
        with open(path, "w") as f:
            f.write(run.stdout)
        bare = os.path.join(tmp, "bare.json")
        b = subprocess.run([exe, "builtin:box_stack_10", "--steps", "5", "--threads", "1", "--json"],
                           capture_output=True, text=True, timeout=120)
        check(b.returncode == 0, "physbench without --series exits 0")
        with open(bare, "w") as f:
            f.write(b.stdout)
        p = subprocess.run([sys.executable, plot, path, "--out", os.path.join(tmp, "run.png")],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 3:
            print("SKIP: matplotlib is missing; the plot is not checked")
            return 77 if fails == 0 else 1
        check(p.returncode == 0, f"the plot script exits 0 ({p.returncode}: {p.stderr[-300:]})")
        png = os.path.join(tmp, "run.png")
        with open(png, "rb") as f:
            head = f.read(24)
        check(head[:8] == b"\x89PNG\r\n\x1a\n", "a PNG was written")
        w, h = struct.unpack(">II", head[16:24])
        check(w == 1560 and h == 400, f"three panels at 100 dpi: 1560 x 400 px ({w} x {h})")
        q = subprocess.run([sys.executable, plot, bare], capture_output=True, text=True, timeout=120)
        check(q.returncode == 1 and "--series" in q.stderr,
              f"a JSON without --series is refused naming the flag ({q.returncode})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
