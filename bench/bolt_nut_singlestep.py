#!/usr/bin/env python3
"""bolt_nut_singlestep.py - paper 002's bolt-nut single step (sec. VII-A): 10 nut
configurations x 10 random external wrenches = 100 cases, the residual of each solver at every
iteration cap, beside paper 002's claims for CANAL, SubADMM and PGS.

The configurations are the states of configs/worlds/bolt_nut.xml at steps 120, 144, ..., 336
(bench/singlestep --configs 10 --config-every 24) while a torque of 0.025 N m about z turns the
nut up its thread from rest (--drive nut=0,0,0.025: about 1.5 turns across the ten); each gets
10 random wrenches of at most 5 N and 0.5 N m on the nut (--cases 10 --wrench 5). Prints one
JSON object: per solver the median over the 100 cases of the residual at its cap, the best
median over caps and where it is reached, the first cap whose median reaches 1e-4, 1e-5 and
1e-8, how many cases reach 1e-8 at some cap, and the paper's claim beside them.

    bench/bolt_nut_singlestep.py [--singlestep build/bench/singlestep] [--out PREFIX]
                                 [--cases 10] [--configs 10] [--solvers canal,subadmm,pgs]

--solvers takes any of physbench's solver names (`all`: every one); each runs to its cap in
CAPS (paper 002's budgets for its three solvers; 30 Newton steps for the Newton-type solvers,
100 for the ADMM ablations). The solvers outside paper 002 have no claim there ("paper": null).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CAPS = {"canal": 30, "subadmm": 100, "pgs": 100, "subadmm-nosub": 100, "subadmm-nobody": 100,
        "sap": 30, "icf-lagged": 30, "icf-similar": 30, "nsn": 30, "firstorder": 30}
PAPER = {
    "canal": "<= 1e-8, fully converged in about 10 iterations (superlinear)",
    "subadmm": "<= 1e-8 (first order: fast drop, then slow; less accurate than CANAL)",
    "pgs": "struggles to get past 1e-4",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--singlestep", default=os.path.join(HERE, "..", "build", "bench", "singlestep"))
    ap.add_argument("--out", default="bolt_nut_singlestep")
    ap.add_argument("--cases", type=int, default=10)
    ap.add_argument("--configs", type=int, default=10)
    ap.add_argument("--solvers", default="canal,subadmm,pgs",
                    help="comma-separated solver names, or all (default: paper 002's three)")
    args = ap.parse_args()
    solvers = list(CAPS) if args.solvers == "all" else args.solvers.split(",")
    unknown = [s for s in solvers if s not in CAPS]
    if unknown:
        ap.error("unknown solver(s) %s; known: %s" % (",".join(unknown), ",".join(CAPS)))
    caps = {s: CAPS[s] for s in solvers}
    scene = os.path.join(HERE, "..", "configs", "worlds", "bolt_nut.xml")
    cmd = [args.singlestep, scene, "--step", "120", "--configs", str(args.configs),
           "--config-every", "24", "--drive", "nut=0,0,0.025", "--cases", str(args.cases),
           "--wrench", "5", "--solvers", ",".join(caps), "--iterations",
           ",".join("%s=%d" % kv for kv in caps.items()), "--repeat", "1", "--progress", "30",
           "--out", args.out]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        sys.stderr.write(run.stderr)
        return run.returncode
    summary = json.loads(run.stdout)
    rows = list(csv.DictReader(open(args.out + ".csv")))
    out = {"command": " ".join(["bench/singlestep", "configs/worlds/bolt_nut.xml"] + cmd[2:]),
           "cases": len({r["case"] for r in rows}), "contacts_per_config":
           summary["contacts_per_config"], "solvers": []}
    for name, cap in caps.items():
        mine = [r for r in rows if r["solver"] == name]
        levels = sorted({int(r["cap"]) for r in mine})
        med = {c: statistics.median(float(r["residual"]) for r in mine if int(r["cap"]) == c)
               for c in levels}
        best = min(levels, key=lambda c: med[c])
        first = {t: next((c for c in levels if med[c] <= float(t)), None)
                 for t in ("1e-4", "1e-5", "1e-8")}
        per_case = {}
        for r in mine:
            per_case[r["case"]] = min(per_case.get(r["case"], 1e300), float(r["residual"]))
        out["solvers"].append({
            "solver": name, "cap": cap, "median_residual_at_cap": med[cap],
            "best_median_residual": med[best], "best_at_iterations": best,
            "first_median_iterations_to": first,
            "cases_reaching_1e-8": sum(v <= 1e-8 for v in per_case.values()),
            "median_solve_ms_at_cap": statistics.median(float(r["solve_ms"]) for r in mine
                                                        if int(r["cap"]) == cap),
            "paper": PAPER.get(name)})
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
