#!/usr/bin/env python3
"""line_search.py - the exact line search against Armijo backtracking (paper 000 sec. VIII-C:
"exact 15-35 % faster overall") for the solvers on the shared Newton driver.

    bench/line_search.py [--solvers sap,icf-lagged,icf-similar] [--steps N] [--warmup W]
                         [--repeat R] [--out FILE.md] [FILE.xml ...]

For every scene and solver, each repeat runs physbench twice, exact then backtracking
(alternated, so that the machine's slow minutes fall on both alike), on one thread without
sleeping:

  physbench FILE --solver S --set FAMILY.line_search=exact|backtracking --warmup W --steps N
            --threads 1 --no-sleep --json

(FAMILY: sap for sap, icf for icf-*). Reports the median over the repeats of physbench's median
ms per step, the Newton iterations per step (deterministic, not noisy) and the ratio backtracking
/ exact of both. Default scenes: the peer scenes (../shared/peer-models, else gen_scenes.py's)
pyramid_wall_20, pile_spheres_512_settled and joint_grid_32 (pile_boxes_512_settled is one
island of 12,000 contacts under icf's 10 cm margin: minutes per run; name it to include it). Prints a
JSON document, then a Markdown table, on stdout; progress on stderr. Exit status 1 when a run
failed.
"""

import argparse
import os
import statistics
import sys

import compare_mujoco as cm

SCENES = ["pyramid_wall_20", "pile_spheres_512_settled", "joint_grid_32"]
MODES = ["exact", "backtracking"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", nargs="*", metavar="FILE.xml", help="scenes (default: see above)")
    ap.add_argument("--solvers", default="sap,icf-lagged,icf-similar")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    cm.add_common_args(ap)
    args = ap.parse_args()
    args.solvers = [s for s in args.solvers.split(",") if s]
    args.physbench = os.path.join(args.build_dir, "bench", "physbench")
    if not args.scenes:
        args.scenes = [cm.peer_file(args.peer_models, n) for n in SCENES]
    return args


def run(args, path, solver, mode):
    family = "icf" if solver.startswith("icf") else "sap"
    return cm.run_json([args.physbench, path, "--solver", solver, "--set",
                        "%s.line_search=%s" % (family, mode), "--warmup", str(args.warmup),
                        "--steps", str(args.steps), "--threads", "1", "--no-sleep", "--json"])


def main():
    args = parse_args()
    rows = []
    failed = False
    for path in args.scenes:
        for solver in args.solvers:
            ms = {m: [] for m in MODES}
            newton = {m: None for m in MODES}
            for rep in range(args.repeat):
                for mode in MODES:
                    cm.log("%s %s %s repeat %d" % (os.path.basename(path), solver, mode, rep + 1))
                    try:
                        r = run(args, path, solver, mode)
                    except RuntimeError as e:
                        cm.log(str(e))
                        failed = True
                        continue
                    ms[mode].append(r["ms_per_step_median"])
                    newton[mode] = r.get("solver_stats", {}).get("newton_iterations_per_step")
                    cm.log("  %.3f ms/step, %s Newton/step" % (ms[mode][-1], newton[mode]))
            med = {m: statistics.median(ms[m]) if ms[m] else None for m in MODES}
            rows.append({"scene": os.path.basename(path), "solver": solver,
                         "ms_exact": med["exact"], "ms_backtracking": med["backtracking"],
                         "ms_runs_exact": ms["exact"], "ms_runs_backtracking": ms["backtracking"],
                         "newton_exact": newton["exact"],
                         "newton_backtracking": newton["backtracking"],
                         "ms_ratio": cm.ratio(med["backtracking"], med["exact"]),
                         "newton_ratio": cm.ratio(newton["backtracking"], newton["exact"])})
    doc = {"machine": cm.machine(), "steps": args.steps, "warmup": args.warmup,
           "repeat": args.repeat, "rows": rows}
    lines = ["| scene | solver | ms/step exact | ms/step backtracking | ratio | Newton/step exact "
             "| Newton/step backtracking | ratio |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["scene"], r["solver"], cm.fmt(r["ms_exact"], ".3g"),
            cm.fmt(r["ms_backtracking"], ".3g"), cm.fmt(r["ms_ratio"], ".2f"),
            cm.fmt(r["newton_exact"], ".3g"), cm.fmt(r["newton_backtracking"], ".3g"),
            cm.fmt(r["newton_ratio"], ".2f")))
    cm.report(doc, "\n".join(lines) + "\n", args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
