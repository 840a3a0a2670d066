#!/usr/bin/env python3
"""compare_solvers.py - physd's contact solvers against each other and MuJoCo, on the same files.

    bench/compare_solvers.py [--solvers subadmm,canal,pgs|all] [--threads 1,2] [--steps N]
                             [--warmup W] [--repeat R] [--out FILE.md] [FILE.xml ...]

For every scene, each repeat runs mjbench (MuJoCo through libmujoco, one thread) and then
physbench once per solver and thread count, alternated so that the machine's slow minutes fall
on all of them alike:

  mjbench   FILE --warmup W --steps N --json
  physbench FILE --warmup W --steps N --threads T --no-sleep --solver S --json

`--solvers all` runs every solver of libphys's table (`physbench --list-solvers`).
Every program takes the same warm-up before its timed steps (the same phase of the same file).
A solver keeps its default iteration cap and tolerance (physd's options, the file's <option>
iterations where given), so the table reads as "what each solver costs for what it reaches":
median ms per step (the median of the repeats' medians), the ratio MuJoCo ms / physd ms, and the
accuracy metric of paper 002 sec. 7 that physd reached (physbench's residual_mean: per step the
contact-weighted mean over islands, averaged over the timed steps). With --detail each cell also
gives the Newton iterations per step (the solver's own count where it reports one: canal, sap,
icf-*, nsn; else its iterations_mean) and the deepest penetration over the timed steps, and the
MuJoCo column its penetration. With --by-solver the table has a row per scene and solver (and
one for MuJoCo) and a column per thread count, for many solvers on few scenes.
Default scenes: the peer piles and pyramid (../shared/peer-models, else bench/gen_scenes.py's),
MuJoCo's humanoid and 22_humanoids, configs/worlds/quadrupeds8.xml. Prints a JSON document, then
a Markdown table, on stdout; progress on stderr. Exit status 1 when a physbench run failed, 2 on
bad arguments.
"""

import argparse
import os
import statistics
import subprocess
import sys

import compare_mujoco as cm

SCENES_ARTICULATED = [os.path.join(cm.MUJOCO_MODELS, "humanoid", "humanoid.xml"),
                      os.path.join(cm.MUJOCO_MODELS, "humanoid", "22_humanoids.xml"),
                      os.path.join(cm.ROOT, "configs", "worlds", "quadrupeds8.xml")]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", nargs="*", metavar="FILE.xml", help="scenes (default: see above)")
    ap.add_argument("--solvers", default="subadmm,canal,pgs",
                    help="comma-separated names, or all (physbench --list-solvers)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    cm.add_common_args(ap)
    ap.add_argument("--detail", action="store_true",
                    help="also iterations per step and the deepest penetration in each cell")
    ap.add_argument("--by-solver", action="store_true",
                    help="a table row per scene and solver, a column per thread count")
    args = ap.parse_args()
    args.solvers = [s for s in args.solvers.split(",") if s]
    args.threads = cm.parse_threads(ap, args.threads)
    if args.steps < 1 or args.warmup < 0 or args.repeat < 1 or not args.solvers:
        ap.error("--steps and --repeat must be >= 1, --warmup >= 0, --solvers not empty")
    args.physbench = os.path.join(args.build_dir, "bench", "physbench")
    args.mjbench = os.path.join(args.build_dir, "bench", "mjbench")
    if args.solvers == ["all"]:
        args.solvers = list_solvers(args.physbench)
    if not args.scenes:
        args.scenes = cm.scene_set("piles", args.peer_models) + SCENES_ARTICULATED
    return args


def list_solvers(physbench):
    """The solver names of libphys's table, in its order (physbench --list-solvers)."""
    out = subprocess.run([physbench, "--list-solvers"], capture_output=True, text=True,
                         check=True).stdout
    return [ln.split()[0] for ln in out.splitlines() if ln.strip() and not ln.startswith(" ")]


def physbench(args, path, solver, threads):
    return cm.run_json([args.physbench, path, "--warmup", str(args.warmup), "--steps",
                        str(args.steps), "--threads", str(threads), "--no-sleep", "--solver",
                        solver, "--json"])


def compare_scene(args, path, index, total):
    """Every program on one scene, alternated over the repeats."""
    name = os.path.basename(path)
    runs = {"mujoco": []}
    errors = []
    for r in range(args.repeat):
        cm.log("[%d/%d] %s: repeat %d/%d" % (index, total, name, r + 1, args.repeat))
        try:
            runs["mujoco"].append(cm.run_mjbench(args, path))
        except (RuntimeError, OSError) as e:
            if not getattr(e, "load_error", False):
                errors.append(str(e))
        for s in args.solvers:
            for t in args.threads:
                try:
                    runs.setdefault((s, t), []).append(physbench(args, path, s, t))
                except RuntimeError as e:
                    errors.append(str(e))
    row = {"scene": name, "errors": errors}
    mj = [j["ms_per_step_median"] for j in runs["mujoco"]]
    row["mujoco_ms"] = statistics.median(mj) if mj else None
    pen = [j["penetration_max_m"] for j in runs["mujoco"] if j.get("penetration_max_m") is not None]
    row["mujoco_penetration_max_m"] = max(pen) if pen else None
    for s in args.solvers:
        for t in args.threads:
            js = runs.get((s, t), [])
            if not js:
                continue
            ms = statistics.median(j["ms_per_step_median"] for j in js)
            row["%s_t%d" % (s, t)] = {
                "ms": ms, "ratio": row["mujoco_ms"] / ms if row["mujoco_ms"] else None,
                "residual_mean": statistics.median(j["residual_mean"] for j in js),
                "iterations_mean": statistics.median(j["iterations_mean"] for j in js),
                "newton_per_step": statistics.median(
                    j["solver_stats"].get("newton_iterations_per_step", j["iterations_mean"])
                    for j in js),
                "penetration_max_m": max(j["penetration_max_m"] for j in js)}
    return row


def cell_text(args, c):
    """One physbench cell: ms (x MuJoCo), residual[, iterations, penetration]."""
    ratio = " (%.2fx)" % c["ratio"] if c["ratio"] else ""
    text = "%.3f%s, %.1e" % (c["ms"], ratio, c["residual_mean"])
    if args.detail:
        text += ", %.1f, %.1e" % (c["newton_per_step"], c["penetration_max_m"])
    return text


def mujoco_text(args, row):
    """The MuJoCo cell: ms[, penetration], or n/a."""
    if not row["mujoco_ms"]:
        return "n/a"
    p = row["mujoco_penetration_max_m"]
    return "%.3f" % row["mujoco_ms"] + ((", %.1e" % p if p is not None else ", n/a")
                                        if args.detail else "")


def markdown_by_solver(args, rows):
    """A row per scene and solver (MuJoCo first), a column per thread count."""
    what = "ms (x MuJoCo), residual" + (", iterations, penetration" if args.detail else "")
    head = ["scene", "solver"] + ["%dT %s" % (t, what) for t in args.threads]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        mj = mujoco_text(args, row)
        lines.append("| " + " | ".join([row["scene"], "MuJoCo (1T)", mj] + [""] *
                                        (len(args.threads) - 1)) + " |")
        for s in args.solvers:
            cells = [cell_text(args, row["%s_t%d" % (s, t)]) if row.get("%s_t%d" % (s, t))
                     else "failed" for t in args.threads]
            lines.append("| " + " | ".join([row["scene"], s] + cells) + " |")
    return "\n".join(lines) + "\n"


def markdown(args, rows):
    if args.by_solver:
        return markdown_by_solver(args, rows)
    head = ["scene", "MuJoCo ms, penetration" if args.detail else "MuJoCo ms"]
    for s in args.solvers:
        for t in args.threads:
            head.append("%s %dT ms (x MuJoCo), residual%s"
                        % (s, t, ", iterations, penetration" if args.detail else ""))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row["scene"], mujoco_text(args, row)]
        for s in args.solvers:
            for t in args.threads:
                c = row.get("%s_t%d" % (s, t))
                cells.append(cell_text(args, c) if c else "failed")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    rows = [compare_scene(args, p, i + 1, len(args.scenes)) for i, p in enumerate(args.scenes)]
    doc = {"machine": cm.machine(), "steps": args.steps, "warmup": args.warmup,
           "repeat": args.repeat, "solvers": args.solvers, "threads": args.threads, "rows": rows}
    cm.report(doc, markdown(args, rows), args.out, indent=1)
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
