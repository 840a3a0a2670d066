#!/usr/bin/env python3
"""compare_pgs.py - physd's PGS against MuJoCo's PGS per iteration, on the same files.

    bench/compare_pgs.py [--iterations K] [--threads 1,2] [--steps N] [--warmup W]
                         [--repeat R] [--stack-mb M] [--out FILE.md] [FILE.xml ...]

Paper 002's PGS baseline (issue: "PGS with 2 threads at least as fast per iteration as MuJoCo's
PGS"). Both solvers run exactly K iterations a step (tolerance 0: no early stop), so the time of
their solve divided by K is the cost of one iteration:

  mjbench   FILE --warmup W --steps N --solver pgs --iterations K --tolerance 0 --stack-mb M
  physbench FILE --warmup W --steps N --solver pgs --iterations K --tolerance 0 --threads T
            --fixed-threads --no-sleep

alternated over R repeats, the same warm-up before the timed steps, once with K and once with
2K iterations. MuJoCo's solve time is its mjTIMER_CONSTRAINT (mj_fwdConstraint: the PGS sweeps
on the dense nefc x nefc matrix it built before, in mj_projectConstraint, which is not
counted); physd's is physbench's `solve` stage, which also counts PGS's preparation (the
Delassus blocks and the colouring). Two figures per side: the average, solve ms / K (physd's
preparation included), and the marginal cost of one more iteration, (solve at 2K - solve at K)
/ K, which leaves every fixed cost out on both sides: that one answers "per iteration".
Whole-step medians (at K) are printed beside. The iterations run are checked on both sides
(MuJoCo's d->solver_iter, physbench's iterations_mean). ratio = MuJoCo ms / physd ms (above 1:
physd is faster).
Default scenes: the peer piles and pyramid (../shared/peer-models, else bench/gen_scenes.py's)
and MuJoCo's humanoid and 22_humanoids. JSON then a Markdown table on stdout, progress on
stderr; exit status 1 when a run failed, 2 on bad arguments.
"""

import argparse
import os
import statistics
import sys

import compare_mujoco as cm

SCENES_ARTICULATED = [os.path.join(cm.MUJOCO_MODELS, "humanoid", "humanoid.xml"),
                      os.path.join(cm.MUJOCO_MODELS, "humanoid", "22_humanoids.xml")]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", nargs="*", metavar="FILE.xml", help="scenes (default: see above)")
    ap.add_argument("--iterations", type=int, default=20, help="PGS iterations a step (K)")
    ap.add_argument("--threads", default="1,2", help="physd thread counts, comma-separated")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stack-mb", type=int, default=2048,
                    help="MuJoCo's mjData stack, MiB (its PGS keeps nefc x nefc there)")
    cm.add_common_args(ap)
    args = ap.parse_args()
    args.threads = cm.parse_threads(ap, args.threads)
    if args.steps < 1 or args.warmup < 0 or args.repeat < 1 or args.iterations < 1:
        ap.error("--steps, --repeat and --iterations must be >= 1, --warmup >= 0")
    args.physbench = os.path.join(args.build_dir, "bench", "physbench")
    args.mjbench = os.path.join(args.build_dir, "bench", "mjbench")
    if not os.access(args.mjbench, os.X_OK):
        ap.error("%s not built (it needs libmujoco-dev)" % args.mjbench)
    if not args.scenes:
        args.scenes = cm.scene_set("piles", args.peer_models) + SCENES_ARTICULATED
    return args


def common(args, path, k):
    return [path, "--warmup", str(args.warmup), "--steps", str(args.steps), "--solver", "pgs",
            "--iterations", str(k), "--tolerance", "0", "--json"]


def both_caps(run_k):
    """One run at K and one at 2K iterations: the figures at K, the solve time at 2K."""
    a, b = run_k(None), run_k(2)
    a["solve_ms_2k"], a["iterations_2k"] = b["solve_ms"], b["iterations"]
    return a


def mujoco_run(args, path):
    def run(mult):
        k = args.iterations * (mult or 1)
        j = cm.run_json([args.mjbench] + common(args, path, k) +
                        ["--stack-mb", str(args.stack_mb)])
        return {"step_ms": j["ms_per_step_median"], "solve_ms": j["solve_ms_median"],
                "iterations": j["iterations_mean"]}
    return both_caps(run)


def physd_run(args, path, threads):
    def run(mult):
        k = args.iterations * (mult or 1)
        j = cm.run_json([args.physbench] + common(args, path, k) +
                        ["--threads", str(threads), "--fixed-threads", "--no-sleep"])
        return {"step_ms": j["ms_per_step_median"], "solve_ms": j["stage_ms"]["solve"],
                "iterations": j["iterations_mean"], "residual": j["residual_mean"]}
    return both_caps(run)


def summarise(runs):
    if not runs:
        return None
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    it = out["iterations"]
    out["ms_per_iteration"] = out["solve_ms"] / it if it else None
    extra = out["iterations_2k"] - it
    out["ms_per_extra_iteration"] = ((out["solve_ms_2k"] - out["solve_ms"]) / extra
                                     if extra > 0 else None)
    return out


def compare_scene(args, path, index, total):
    """MuJoCo and physd's thread counts on one scene, alternated over the repeats."""
    name = os.path.basename(path)
    runs = {"mujoco": []}
    errors = []
    for r in range(args.repeat):
        cm.log("[%d/%d] %s: repeat %d/%d" % (index, total, name, r + 1, args.repeat))
        try:
            runs["mujoco"].append(mujoco_run(args, path))
        except (RuntimeError, OSError) as e:
            errors.append("mujoco: %s" % e)
        for t in args.threads:
            try:
                runs.setdefault(t, []).append(physd_run(args, path, t))
            except (RuntimeError, OSError) as e:
                errors.append("physd %d threads: %s" % (t, e))
    row = {"scene": name, "errors": errors, "mujoco": summarise(runs["mujoco"])}
    for t in args.threads:
        s = summarise(runs.get(t, []))
        mj = row["mujoco"]
        if s and mj and s["ms_per_iteration"] and mj["ms_per_iteration"]:
            s["ratio_per_iteration"] = mj["ms_per_iteration"] / s["ms_per_iteration"]
            s["ratio_step"] = mj["step_ms"] / s["step_ms"]
            if s["ms_per_extra_iteration"] and mj["ms_per_extra_iteration"]:
                s["ratio_extra_iteration"] = (mj["ms_per_extra_iteration"] /
                                              s["ms_per_extra_iteration"])
        row["physd_t%d" % t] = s
    return row


def markdown(args, rows):
    head = ["scene", "MuJoCo PGS ms per extra iteration; solve/K; step ms"]
    for t in args.threads:
        head.append("physd PGS %dT ms per extra iteration (x MuJoCo); solve/K (x); step ms (x)"
                    % t)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        mj = row["mujoco"]
        if not mj:
            cells = [row["scene"], "failed"]
        elif mj["ms_per_iteration"] is None or mj["ms_per_extra_iteration"] is None:
            cells = [row["scene"], "no iterations (%.3f)" % mj["step_ms"]]
        else:
            cells = [row["scene"], "%.4f; %.4f; %.3f" % (mj["ms_per_extra_iteration"],
                                                        mj["ms_per_iteration"], mj["step_ms"])]
        for t in args.threads:
            c = row.get("physd_t%d" % t)
            if not c:
                cells.append("failed")
            elif "ratio_extra_iteration" in c:
                cells.append("%.4f (%.2fx); %.4f (%.2fx); %.3f (%.2fx)" % (
                    c["ms_per_extra_iteration"], c["ratio_extra_iteration"],
                    c["ms_per_iteration"], c["ratio_per_iteration"], c["step_ms"],
                    c["ratio_step"]))
            elif c["ms_per_iteration"] is None or c["ms_per_extra_iteration"] is None:
                cells.append("no iterations, %.3f" % c["step_ms"])
            else:
                cells.append("%.4f; %.4f; %.3f" % (c["ms_per_extra_iteration"],
                                                   c["ms_per_iteration"], c["step_ms"]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    rows = [compare_scene(args, p, i + 1, len(args.scenes)) for i, p in enumerate(args.scenes)]
    doc = {"machine": cm.machine(), "iterations": args.iterations, "steps": args.steps,
           "warmup": args.warmup, "repeat": args.repeat, "threads": args.threads, "rows": rows}
    cm.report(doc, markdown(args, rows), args.out, indent=1)
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
