#!/usr/bin/python3
"""table3.py - paper 002's Table III: SubADMM against its No Sub and No Body ablations on the
quadruped drops, with the paper's penalty rule and with physd's default.

    bench/table3.py [--threads 1,2] [--steps N] [--warmup W] [--repeat R] [--out FILE.md]
                    [--build-dir DIR] [FILE.xml ...]

Protocol (Table III's): exactly 100 iterations per step, no early stop (`--iterations 100
--tolerance 0`), and the paper's ADMM: physd's Anderson acceleration off (`--set
subadmm.anderson=0`; it applies to SubADMM and No Body, not to No Sub, so with it the three would
not run the same iteration). Rules (SubADMM's penalty, `subadmm.penalty_rule`; the only difference):
  paper    rule (43) as the paper writes it: beta0 from whole pieces, adapted by (43) with
           gamma 10, no over-relaxation (`--penalty paper`)
  default  physd's default: beta = 4 beta0, fixed for the step, over-relaxation 1.8
           (`--penalty scaled`)
No Sub never applies (43) (it keeps beta0: docs/engine.md), so its two rows differ only by
beta0's counting and the over-relaxation.

For every scene, each repeat runs physbench once per (rule, thread count, solver), alternated
so that the machine's slow minutes fall on all of them alike:

  physbench FILE --warmup W --steps N --threads T --no-sleep --solver S --iterations 100
            --tolerance 0 --set subadmm.anderson=0 --penalty RULE --json

with S = subadmm, subadmm-nosub, subadmm-nobody. A cell's figures are medians over the repeats:
ms per step (each run's median), the solve stage's ms per step (stage_ms.solve), iterations per
step, the residual reached (residual_mean, the sec. 7 metric), contacts per step. The ratio is
Table III's: a variant's ms over SubADMM's under the same rule, scene and thread count (above 1:
SubADMM faster), on the whole step and on the solve stage alone. The paper's figures (8 robots,
i5-13600KF, thread count not stated) are in the JSON under "paper" and beside ours in the table.

Default scenes: configs/worlds/quadruped_drop_8.xml and quadruped_drop_27.xml (written by
bench/gen_scenes.py), warm-up 240 steps (1 s: the robots have landed), 500 timed steps, 3
repeats. Prints a JSON document, then a Markdown table, on stdout; progress on stderr. Exit
status 1 when a physbench run failed, 2 on bad arguments.
"""

import argparse
import os
import statistics
import sys

import compare_mujoco as cm

VARIANTS = ["subadmm", "subadmm-nosub", "subadmm-nobody"]
PROTOCOL = ["--iterations", "100", "--tolerance", "0", "--set", "subadmm.anderson=0"]
RULES = {"paper": ["--penalty", "paper"], "default": ["--penalty", "scaled"]}
SCENES = [os.path.join(cm.ROOT, "configs", "worlds", "quadruped_drop_%d.xml" % n)
          for n in (8, 27)]
# paper 002, Table III and sec. 8 (8 Laikagos, 144 DOF, 80-100 contacts, 100 iterations)
PAPER = {"ms": {"subadmm": 0.435, "subadmm-nosub": 1.21, "subadmm-nobody": 0.638},
         "ratio_8": {"subadmm-nosub": 2.78, "subadmm-nobody": 1.46},
         "ratio_27": {"subadmm-nosub": 3.63},
         "residual_neg_log10": {"subadmm": 4.8802, "subadmm-nosub": 4.8817,
                                "subadmm-nobody": 4.8562}}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", nargs="*", metavar="FILE.xml", help="scenes (default: see above)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=240)
    ap.add_argument("--repeat", type=int, default=3)
    cm.add_common_args(ap)
    args = ap.parse_args()
    args.threads = cm.parse_threads(ap, args.threads)
    if args.steps < 1 or args.warmup < 0 or args.repeat < 1:
        ap.error("--steps and --repeat must be >= 1, --warmup >= 0")
    args.physbench = os.path.join(args.build_dir, "bench", "physbench")
    args.scenes = args.scenes or SCENES
    return args


def physbench(args, path, rule, solver, threads):
    return cm.run_json([args.physbench, path, "--warmup", str(args.warmup), "--steps",
                        str(args.steps), "--threads", str(threads), "--no-sleep", "--solver",
                        solver, "--json"] + PROTOCOL + RULES[rule])


def cell(runs):
    """The medians of one (rule, threads, solver) over its repeats."""
    med = lambda key: statistics.median(key(j) for j in runs)
    return {"ms": med(lambda j: j["ms_per_step_median"]),
            "solve_ms": med(lambda j: j["stage_ms"]["solve"]),
            "iterations_mean": med(lambda j: j["iterations_mean"]),
            "residual_mean": med(lambda j: j["residual_mean"]),
            "contacts_mean": med(lambda j: j["contacts_mean"]),
            "solver_options": runs[0]["solver_options"],
            "runs_ms": [j["ms_per_step_median"] for j in runs]}


def table_scene(args, path, index, total):
    """Every rule, thread count and variant on one scene, alternated over the repeats."""
    name = os.path.basename(path)
    runs, errors = {}, []
    for r in range(args.repeat):
        cm.log("[%d/%d] %s: repeat %d/%d" % (index, total, name, r + 1, args.repeat))
        for rule in RULES:
            for t in args.threads:
                for s in VARIANTS:
                    try:
                        runs.setdefault((rule, t, s), []).append(physbench(args, path, rule, s, t))
                    except RuntimeError as e:
                        errors.append(str(e))
    row = {"scene": name, "errors": errors, "cells": []}
    for rule in RULES:
        for t in args.threads:
            base = cell(runs[(rule, t, "subadmm")]) if runs.get((rule, t, "subadmm")) else None
            for s in VARIANTS:
                if not runs.get((rule, t, s)):
                    continue
                c = cell(runs[(rule, t, s)])
                c.update({"rule": rule, "threads": t, "solver": s,
                          "ratio": cm.ratio(c["ms"], base and base["ms"]),
                          "solve_ratio": cm.ratio(c["solve_ms"], base and base["solve_ms"])})
                row["cells"].append(c)
    return row


def paper_cell(scene, solver):
    """The paper's ms and ratio for this scene and solver, as table text."""
    robots = 27 if "27" in scene else 8
    ms = PAPER["ms"].get(solver) if robots == 8 else None
    ratio = 1.0 if solver == "subadmm" else PAPER["ratio_%d" % robots].get(solver)
    return ("%.3f" % ms if ms else "-"), ("%.2fx" % ratio if ratio else "-")


def markdown(rows):
    head = ["scene", "rule", "threads", "solver", "ms/step", "x SubADMM", "solve ms",
            "x SubADMM (solve)", "iterations", "residual", "contacts", "paper ms",
            "paper x SubADMM"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    fmt = lambda v, spec: format(v, spec) if v is not None else "n/a"
    for row in rows:
        for c in row["cells"]:
            pms, pratio = paper_cell(row["scene"], c["solver"])
            lines.append("| " + " | ".join([
                row["scene"], c["rule"], str(c["threads"]), c["solver"], fmt(c["ms"], ".3f"),
                fmt(c["ratio"], ".2f") + "x", fmt(c["solve_ms"], ".3f"),
                fmt(c["solve_ratio"], ".2f") + "x", fmt(c["iterations_mean"], ".1f"),
                fmt(c["residual_mean"], ".1e"), fmt(c["contacts_mean"], ".0f"), pms,
                pratio]) + " |")
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    rows = [table_scene(args, p, i + 1, len(args.scenes)) for i, p in enumerate(args.scenes)]
    doc = {"machine": cm.machine(), "steps": args.steps, "warmup": args.warmup,
           "repeat": args.repeat, "threads": args.threads,
           "protocol": " ".join(PROTOCOL),
           "rules": {k: " ".join(v) for k, v in RULES.items()},
           "paper": PAPER, "rows": rows}
    cm.report(doc, markdown(rows), args.out, indent=1)
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
