#!/usr/bin/python3
"""pour.py - paper 002's pouring task (sec. VII-C, Fig. 11) by every solver: time and residual
against the number of balls, and whether the task is done (balls in the cup, grip held).

    bench/pour.py [--balls 9,18,27,36,45] [--others-balls 9,45] [--solvers A,B,...]
                  [--threads 1] [--repeat R] [--seconds S] [--out FILE.md] [--build-dir DIR]

Scenes: configs/worlds/pour_9.xml and pour_45.xml (committed), the other counts written by
bench/gen_scenes.py into a temporary directory (pour_N). A dual-arm robot squeezes a revolved-SDF
bottle of N balls (radius 5 mm, 10 g/cm^3) between its finger pads and tips it over an SDF cup
along the file's keyframe schedule (bench/pour_task.c), h = 1/240 s, 4.6 s (1104 steps).

Protocol. The paper's three solvers at its fixed budgets, no early stop (`--tolerance 0`):
canal 5 iterations, subadmm 100, pgs 100, on every --balls count. Every other solver of
physd's table (physbench --list-solvers) with its own defaults (iteration cap, tolerance) on
the --others-balls counts. Each run is `pourbench FILE --solver S [--iterations K --tolerance
0] --threads T` (bench/pourbench.c); --repeat R runs each R times (the runs alternated) and a
cell's times are the median over the repeats of each run's median step; the other figures are
the last run's (the runs are deterministic: the same state hash every time).

Figures per cell: ms per step (median; mean beside it: a few slow steps weigh there), the solve
stage's median ms, the residual (sec. 7 metric: the mean over the steps of each step's
contact-weighted island mean), iterations per step, the most contacts, the deepest penetration
of any step, the balls in the cup and out of the bottle at the end, the grip's drift and turn
(the bottle in the pads' frames, largest from 0.4 s on). Per solver over the ball counts: the
exponent of ms per step against the system DOF (16 robot + 6 bottle + 6 per ball; a
least-squares line in log-log), the paper's "time growth".

The paper's figures (Fig. 11 is a plot; no values are printed): time growth SubADMM < PGS <
CANAL, CANAL's exponent below 3; CANAL's residual below 1e-5 within 5 iterations; SubADMM's
residual about 0.1x PGS's; residuals barely depend on the count. They are in the JSON under
"paper" and beside ours in the second table. MuJoCo is not run: the bottle and the cup are
physd SDF geoms, which MuJoCo loads as solid stand-in cylinders (the balls would start inside a
solid).

Prints a JSON document, then the Markdown tables, on stdout; progress on stderr. Exit status 1
when a run failed (its error is in the JSON), 2 on bad arguments.
"""

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile

import compare_mujoco as cm
import gen_scenes

PAPER_BUDGETS = {"canal": 5, "subadmm": 100, "pgs": 100}
PAPER = {
    "robot": "Unitree G1 upper body with grippers, 28 DOF; reaches for and grasps the bottle",
    "balls": [9, 18, 27, 36, 45],
    "iterations": PAPER_BUDGETS,
    "time_growth": "SubADMM < PGS < CANAL; CANAL exponent < 3 (Fig. 11 left)",
    "canal_residual": "< 1e-5 within 5 iterations",
    "subadmm_vs_pgs_residual": "about 0.1x",
    "residual_vs_balls": "barely depends on the count",
    "values": "none printed (Fig. 11 is a plot)",
}
MUJOCO = ("not run: the bottle and the cup are physd SDF geoms (physd:sdf profiles); MuJoCo "
          "loads their solid stand-in cylinders, so the balls would start inside a solid")


def counts(ap, text):
    try:
        out = [int(x) for x in text.split(",") if x]
    except ValueError:
        ap.error("bad ball counts %r" % text)
    if any(n < 1 or n > gen_scenes.POUR_MAX_BALLS for n in out):
        ap.error("ball counts must be 1 .. %d" % gen_scenes.POUR_MAX_BALLS)
    return out


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--balls", default="9,18,27,36,45",
                    help="ball counts for canal, subadmm and pgs (default 9,18,27,36,45)")
    ap.add_argument("--others-balls", default="9,45",
                    help="ball counts for the other solvers (default 9,45; '' for none)")
    ap.add_argument("--solvers", help="comma-separated solvers (default: every one)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seconds", type=float, help="simulated time (default: the whole task)")
    cm.add_common_args(ap)
    args = ap.parse_args()
    args.balls = counts(ap, args.balls)
    args.others_balls = counts(ap, args.others_balls)
    if args.threads < 1 or args.repeat < 1 or (args.seconds is not None and args.seconds <= 0):
        ap.error("--threads and --repeat must be >= 1, --seconds > 0")
    args.pourbench = os.path.join(args.build_dir, "bench", "pourbench")
    physbench = os.path.join(args.build_dir, "bench", "physbench")
    listed = subprocess.run([physbench, "--list-solvers"], capture_output=True, text=True,
                            check=True).stdout
    known = [line.split()[0] for line in listed.splitlines() if line and not line[0].isspace()]
    args.solvers = args.solvers.split(",") if args.solvers else known
    for s in args.solvers:
        if s not in known:
            ap.error("unknown solver %r (known: %s)" % (s, ", ".join(known)))
    return args


def scene_path(n, tmp):
    """configs/worlds/pour_N.xml when committed, else a fresh one in tmp."""
    committed = os.path.join(cm.ROOT, "configs", "worlds", "pour_%d.xml" % n)
    if os.path.exists(committed):
        return committed
    path = os.path.join(tmp, "pour_%d.xml" % n)
    if not os.path.exists(path):
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write("\n".join(gen_scenes.pour("pour_%d" % n, n)) + "\n")
    return path


def run(args, path, solver):
    cmd = [args.pourbench, path, "--solver", solver, "--threads", str(args.threads)]
    if solver in PAPER_BUDGETS:
        cmd += ["--iterations", str(PAPER_BUDGETS[solver]), "--tolerance", "0"]
    if args.seconds:
        cmd += ["--seconds", str(args.seconds)]
    return cm.run_json(cmd)


def exponent(cells):
    """Least-squares slope of log(ms) against log(DOF) over a solver's ball counts."""
    pts = [(math.log(c["dof"]), math.log(c["ms"])) for c in cells if c.get("ms")]
    if len(pts) < 2:
        return None
    mx = statistics.mean(x for x, _ in pts)
    my = statistics.mean(y for _, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx > 0 else None


def main():
    args = parse_args()
    plan = [(n, s) for s in args.solvers
            for n in (args.balls if s in PAPER_BUDGETS else args.others_balls)]
    runs, errors = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for i, (n, s) in enumerate(plan):
                cm.log("[repeat %d/%d, %d/%d] %s, %d balls" % (r + 1, args.repeat, i + 1,
                                                              len(plan), s, n))
                try:
                    runs.setdefault((n, s), []).append(run(args, scene_path(n, tmp), s))
                except RuntimeError as e:
                    errors.append({"balls": n, "solver": s, "error": str(e)})
    cells = []
    for (n, s), js in runs.items():
        last = js[-1]
        cell = {k: last[k] for k in ("solver", "balls", "iterations_cap", "tolerance", "steps",
                                     "ms_per_step_mean", "solve_ms_median", "residual_mean",
                                     "residual_median", "residual_worst", "iterations_mean",
                                     "contacts_max", "penetration_max", "in_cup",
                                     "out_of_bottle", "grip_drift_max", "grip_turn_max",
                                     "state_hash")}
        cell.update({"dof": 22 + 6 * n, "budget": "paper" if s in PAPER_BUDGETS else "default",
                     "ms": statistics.median(j["ms_per_step_median"] for j in js),
                     "runs_ms": [j["ms_per_step_median"] for j in js],
                     "deterministic": len({j["state_hash"] for j in js}) == 1})
        cells.append(cell)
    order = {s: i for i, s in enumerate(args.solvers)}
    cells.sort(key=lambda c: (order[c["solver"]], c["balls"]))
    growth = {s: exponent([c for c in cells if c["solver"] == s]) for s in args.solvers}
    doc = {"machine": cm.machine(), "threads": args.threads, "repeat": args.repeat,
           "seconds": args.seconds, "paper": PAPER, "mujoco": MUJOCO, "cells": cells,
           "time_exponent": growth, "errors": errors}
    cm.report(doc, markdown(cells, growth, errors), args.out, indent=1)
    return 1 if errors else 0


def markdown(cells, growth, errors):
    fmt = lambda v, spec: format(v, spec) if v is not None else "n/a"
    head = ["solver", "budget", "balls", "DOF", "ms/step", "mean ms", "solve ms", "residual",
            "iterations", "contacts", "max pen. mm", "in cup", "left bottle", "grip drift mm",
            "grip turn rad"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in cells:
        budget = ("%d it." % c["iterations_cap"]) if c["budget"] == "paper" else "default"
        lines.append("| " + " | ".join([
            c["solver"], budget, str(c["balls"]), str(c["dof"]), fmt(c["ms"], ".3f"),
            fmt(c["ms_per_step_mean"], ".3f"), fmt(c["solve_ms_median"], ".3f"),
            fmt(c["residual_mean"], ".1e"), fmt(c["iterations_mean"], ".1f"),
            str(c["contacts_max"]), fmt(1e3 * c["penetration_max"], ".2f"),
            "%d/%d" % (c["in_cup"], c["balls"]), "%d/%d" % (c["out_of_bottle"], c["balls"]),
            fmt(1e3 * c["grip_drift_max"], ".1f"), fmt(c["grip_turn_max"], ".3f")]) + " |")
    # the paper's claims beside ours
    res = lambda s: [c["residual_mean"] for c in cells if c["solver"] == s]
    ratio = None
    if res("subadmm") and res("pgs"):
        ratio = statistics.median(a / b for a, b in zip(res("subadmm"), res("pgs")) if b > 0)
    paper_rank = ["subadmm", "pgs", "canal"]
    ours = sorted((s for s in paper_rank if growth.get(s) is not None), key=lambda s: growth[s])
    spread = {s: (max(res(s)) / min(res(s)) if res(s) and min(res(s)) > 0 else None)
              for s in paper_rank}
    lines += ["", "| claim (paper 002, Fig. 11) | paper | physd |", "|---|---|---|",
              "| time growth with DOF | SubADMM < PGS < CANAL | %s (exponents %s) |"
              % (" < ".join(ours), ", ".join("%s %s" % (s, fmt(growth[s], ".2f")) for s in ours)),
              "| CANAL exponent | < 3 | %s |" % fmt(growth.get("canal"), ".2f"),
              "| CANAL residual, 5 iterations | < 1e-5 | %s |"
              % ", ".join(fmt(r, ".1e") for r in res("canal")),
              "| SubADMM / PGS residual | about 0.1 | %s |" % fmt(ratio, ".2f"),
              "| residual spread over the counts (max/min) | small | %s |"
              % ", ".join("%s %s" % (s, fmt(spread[s], ".1f")) for s in paper_rank),
              "| MuJoCo | - | %s |" % MUJOCO]
    for e in errors:
        lines.append("\nfailed: %s, %d balls: %s" % (e["solver"], e["balls"], e["error"]))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
