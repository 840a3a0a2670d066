#!/usr/bin/python3
"""Compare physd's step time with MuJoCo 2.2.2 on the same MJCF scenes, side by side in one run.

What is timed. Both programs load the scene afresh, run W untimed warm-up steps (--warmup,
default 1000), then time N steps (--steps) one by one with CLOCK_MONOTONIC around each step
call; nothing else lies inside the timed interval. For each scene, R times over (--repeat), in
alternation:
  mjbench FILE --warmup W --steps N --json                        (MuJoCo, mj_step, one thread)
  physbench FILE --warmup W --steps N --threads 1 --no-sleep --json
  physbench FILE --warmup W --steps N --threads 2 --no-sleep --json
  physbench FILE --warmup W --steps N --threads 2 --json          (sleeping on; MuJoCo has none)
then the median over the R runs of each program's per-run statistic: the median ms per step by
default, the mean with --stat mean (the table header says which). mjbench (bench/mjbench.c,
built when libmujoco-dev is installed) runs exactly physbench's protocol with libmujoco, so both
are timed on the same phase of the same scene.

Fallback: when mjbench is not built, MuJoCo is timed with `mujoco-testspeed FILE N 1 0`, which
times N steps FROM STEP 0 (no warm-up) and reports only its mean. That is not the same phase:
on scenes that settle it favours physd. The output then says so in the JSON ("mujoco.tool") and
in the table header, and the ratios compare means.

  ratio   = MuJoCo ms per step / physd ms per step  (= physd steps/s over MuJoCo's; > 1: physd
            faster), for physd on 1 and on 2 threads
  scaling = physd 1-thread ms / physd 2-thread ms   (> 1: the second thread helps)
  penetration = the deepest contact penetration over the timed steps, m, of each program
            (physd: before its solve; MuJoCo: -min contact dist, found before its solve)

Scene sets (--set): "piles" (default) are the settled piles and the pyramid of the peer models
directory (--peer-models, env PHYS_PEER_MODELS, default ../shared/peer-models beside the
checkout) when it exists, else the unsettled piles written by bench/gen_scenes.py into
bench/scenes/ (made on demand). "articulated" are MuJoCo's humanoid, 22_humanoids and
humanoid100 models, the peer joint_grid_32 and configs/worlds/quadrupeds8.xml (which MuJoCo
2.2.2 cannot load: its column then says so). "robots" are small robots alone, where a step's
fixed cost counts: bench/robots/quadruped_fixed.xml and arm6.xml, the menagerie-style
tests/data/menagerie_bot/scene.xml and MuJoCo's humanoid. Files given with --scenes (or as positional
arguments) replace the set. Prints a JSON document, then a Markdown table, on stdout; progress
goes to stderr. Exit status 1 when a run failed (a scene MuJoCo cannot load is reported, not a
failure), 2 on bad arguments.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEER_DIR_DEFAULT = os.path.join(os.path.dirname(ROOT), "shared", "peer-models")
PEER_SCENES = ["pile_spheres_512_settled", "pile_boxes_512_settled",
               "pile_spheres_1000_frictionless_settled", "pyramid_wall_20"]
GEN_SCENES = ["pile_spheres_512", "pile_boxes_512", "pile_spheres_1000_frictionless",
              "pyramid_wall_20"]
MUJOCO_MODELS = "/usr/share/mujoco/model"
ARTICULATED = [os.path.join(MUJOCO_MODELS, "humanoid", "humanoid.xml"),
               os.path.join(MUJOCO_MODELS, "humanoid", "22_humanoids.xml"),
               os.path.join(MUJOCO_MODELS, "humanoid100", "humanoid100.xml"),
               "peer:joint_grid_32",
               os.path.join(ROOT, "configs", "worlds", "quadrupeds8.xml")]

ROBOTS = [os.path.join(ROOT, "bench", "robots", "quadruped_fixed.xml"),
          os.path.join(ROOT, "bench", "robots", "arm6.xml"),
          os.path.join(ROOT, "tests", "data", "menagerie_bot", "scene.xml"),
          os.path.join(MUJOCO_MODELS, "humanoid", "humanoid.xml")]

# physbench configurations: (key, threads, sleep)
CONFIGS = [("t1", 1, False), ("t2", 2, False), ("t2_sleep", 2, True)]


def log(msg):
    """Progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def generated(names):
    """gen_scenes.py's files for `names` in bench/scenes/ (generated when missing)."""
    out = os.path.join(HERE, "scenes")
    files = [os.path.join(out, n + ".xml") for n in names]
    if not all(os.path.exists(f) for f in files):
        log("generating scenes with bench/gen_scenes.py")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_scenes.py"), "--out", out]
                       + names, check=True, stdout=subprocess.DEVNULL)
    return files


def peer_file(peer_dir, name):
    """A peer scene from peer_dir when it is there, else gen_scenes.py's version of it."""
    path = os.path.join(peer_dir, name + ".xml")
    return path if os.path.isfile(path) else generated([name])[0]


def scene_set(name, peer_dir):
    """The files of the scene set `name` ("piles", "articulated" or "robots")."""
    if name == "robots":
        return list(ROBOTS)
    if name == "articulated":
        return [peer_file(peer_dir, p[5:]) if p.startswith("peer:") else p for p in ARTICULATED]
    if os.path.isdir(peer_dir):
        return [os.path.join(peer_dir, n + ".xml") for n in PEER_SCENES]
    return generated(GEN_SCENES)


def run_json(cmd):
    """Run a bench program; its JSON report, or RuntimeError with the tail of its stderr."""
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        err = RuntimeError("%s failed (exit %d): %s"
                           % (" ".join(cmd), proc.returncode, proc.stderr.strip()[-500:]))
        err.load_error = "cannot load" in proc.stderr
        raise err
    return json.loads(proc.stdout)


def run_mjbench(args, path):
    """One mjbench run (the same warm-up and steps as physbench); its JSON report."""
    return run_json([args.mjbench, path, "--warmup", str(args.warmup), "--steps",
                     str(args.steps), "--json"])


def run_testspeed(args, path):
    """Fallback: one mujoco-testspeed run, from step 0. Only the mean is known."""
    proc = subprocess.run([args.testspeed, path, str(args.steps), "1", "0"], capture_output=True,
                          text=True, check=False)
    text = proc.stdout + proc.stderr
    ms = re.search(r"Time per step\s*:\s*([0-9.eE+-]+)\s*ms", text)
    contacts = re.search(r"Contacts per step\s*:\s*([0-9.eE+-]+)", text)
    if proc.returncode != 0 or not ms:
        err = RuntimeError("mujoco-testspeed failed on %s: %s" % (path, text.strip()[-500:]))
        err.load_error = "XML" in text or "Error" in text
        raise err
    return {"ms_per_step_mean": float(ms.group(1)), "ms_per_step_median": None,
            "contacts_mean": float(contacts.group(1)) if contacts else None,
            "penetration_max_m": None}


def run_physbench(args, path, threads, sleep):
    """One physbench run; its JSON report."""
    cmd = [args.physbench, path, "--steps", str(args.steps), "--threads", str(threads), "--json",
           "--warmup", str(args.warmup)]
    if not sleep:
        cmd.append("--no-sleep")
    return run_json(cmd)


def add_common_args(ap):
    """The arguments the comparison scripts beside this one share: --build-dir, --peer-models
    and --out."""
    ap.add_argument("--build-dir", default=os.environ.get("PHYS_BUILD_DIR",
                                                         os.path.join(ROOT, "build")))
    ap.add_argument("--peer-models", default=os.environ.get("PHYS_PEER_MODELS",
                                                           PEER_DIR_DEFAULT))
    ap.add_argument("--out", metavar="FILE.md", help="also write the Markdown table here")


def parse_threads(ap, text):
    """--threads of the comparison scripts: comma-separated counts, each >= 1 (else a usage
    error through ap)."""
    try:
        threads = [int(t) for t in text.split(",") if t]
    except ValueError:
        ap.error("--threads: comma-separated integers")
    if not threads or min(threads) < 1:
        ap.error("--threads: at least one count, each >= 1")
    return threads


def median_or_none(values):
    """Median of the non-None values, or None."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(num, den):
    """num / den, or None when either is missing or zero."""
    return num / den if num and den else None


def compare_scene(args, path, index, total):
    """All runs of one scene, alternating the programs; returns the scene's JSON entry."""
    name = os.path.splitext(os.path.basename(path))[0]
    mujoco, bench = [], {key: [] for key, _, _ in CONFIGS}
    errors, load_error = [], None
    for rep in range(args.repeat):
        tag = "[%d/%d %s rep %d/%d]" % (index, total, name, rep + 1, args.repeat)
        # MuJoCo first; a file it cannot load is reported once, not retried
        if load_error is None:
            try:
                log("%s %s" % (tag, args.mujoco_tool))
                mujoco.append(run_mjbench(args, path) if args.mujoco_tool == "mjbench"
                              else run_testspeed(args, path))
            except (RuntimeError, OSError, ValueError) as e:
                if getattr(e, "load_error", False):
                    load_error = str(e)
                    log("%s MuJoCo cannot load it: %s" % (tag, e))
                else:
                    errors.append(str(e))
        for key, threads, sleep in CONFIGS:
            try:
                log("%s physbench %s" % (tag, key))
                bench[key].append(run_physbench(args, path, threads, sleep))
            except (RuntimeError, OSError, ValueError) as e:
                errors.append(str(e))

    # MuJoCo: the fallback only knows the mean, so its ratios compare means
    stat_key = "ms_per_step_" + args.mujoco_stat
    mj_ms = median_or_none([m[stat_key] for m in mujoco])
    entry = {"scene": name, "file": path,
             "mujoco": {"tool": args.mujoco_tool, "stat": args.mujoco_stat, "ms_per_step": mj_ms,
                        "runs_ms": [m[stat_key] for m in mujoco],
                        "ms_per_step_mean": median_or_none(
                            [m["ms_per_step_mean"] for m in mujoco]),
                        "contacts_mean": median_or_none([m["contacts_mean"] for m in mujoco]),
                        "penetration_max_m": max([m["penetration_max_m"] for m in mujoco
                                                  if m["penetration_max_m"] is not None],
                                                 default=None),
                        "load_error": load_error},
             "physbench": {}, "errors": errors}
    if mujoco and args.mujoco_tool == "mjbench":
        last = mujoco[-1]
        entry["mujoco"].update({k: last.get(k) for k in
                                ("mujoco_version", "nbody", "nv", "timestep", "warnings")})
        entry["mujoco"]["ms_per_step_p95"] = median_or_none([m["ms_per_step_p95"]
                                                             for m in mujoco])

    # physd: the chosen statistic (the mean when MuJoCo's fallback forces it)
    pb_key = "ms_per_step_" + args.mujoco_stat
    for key, threads, sleep in CONFIGS:
        runs = bench[key]
        if not runs:
            entry["physbench"][key] = None
            continue
        last = runs[-1]
        ms = median_or_none([r[pb_key] for r in runs])
        entry["physbench"][key] = {
            "threads": threads, "sleep": sleep, "bodies": last.get("bodies"),
            "ms_per_step": ms,
            "ms_per_step_median": median_or_none([r["ms_per_step_median"] for r in runs]),
            "ms_per_step_mean": median_or_none([r["ms_per_step_mean"] for r in runs]),
            "ms_per_step_p95": median_or_none([r["ms_per_step_p95"] for r in runs]),
            "runs_ms": [r[pb_key] for r in runs],
            "ratio": ratio(mj_ms, ms),
            "contacts_mean": last.get("contacts_mean"),
            "iterations_mean": last.get("iterations_mean"),
            "iterations_max": last.get("iterations_max"),
            "residual_mean": last.get("residual_mean"),
            "penetration_max_m": max(r["penetration_max_m"] for r in runs),
            "bodies_asleep_end": last.get("bodies_asleep_end"),
            "allocations_during_steps": last.get("allocations_during_steps"),
            "state_hash": last.get("state_hash"),
        }
    t1, t2 = entry["physbench"]["t1"], entry["physbench"]["t2"]
    entry["scaling_2t_over_1t"] = ratio(t1 and t1["ms_per_step"], t2 and t2["ms_per_step"])
    return entry


def fmt(value, spec):
    """Format a number for the table, or "n/a"."""
    return "n/a" if value is None else format(value, spec)


def markdown(doc):
    """The Markdown table of a comparison document."""
    stat = doc["stat"]
    if doc["mujoco_tool"] == "mjbench":
        how = ("MuJoCo timed by mjbench on the same phase as physd (%d untimed warm-up steps, "
               "then %d timed)" % (doc["warmup"], doc["steps"]))
    else:
        how = ("MuJoCo timed by mujoco-testspeed from step 0, not the same phase (physd after "
               "%d warm-up steps; mjbench not built), so ms are means" % doc["warmup"])
    lines = [
        "%s; %s ms per step, median of %d repeats; %s, %s cores. ratio = MuJoCo ms / physd ms "
        "(> 1: physd faster); scaling = physd 1-thread ms / 2-thread ms; penetration: deepest "
        "over the timed steps, m; sleeping off except in its column."
        % (how, stat, doc["repeat"], doc["machine"]["cpu"], doc["machine"]["cores"]),
        "",
        "| scene | MuJoCo %s ms | physd 1 thread %s ms | ratio | physd 2 threads %s ms | ratio "
        "| scaling 2/1 | 2 threads sleep on ms | iterations | residual | MuJoCo penetration "
        "| physd penetration |" % (stat, stat, stat),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in doc["scenes"]:
        t1, t2, t2s = (s["physbench"].get(k) or {} for k, _, _ in CONFIGS)
        mj = s["mujoco"]
        mj_ms = "cannot load" if mj["load_error"] else fmt(mj["ms_per_step"], ".3f")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s["scene"], mj_ms,
            fmt(t1.get("ms_per_step"), ".3f"), fmt(t1.get("ratio"), ".2f"),
            fmt(t2.get("ms_per_step"), ".3f"), fmt(t2.get("ratio"), ".2f"),
            fmt(s["scaling_2t_over_1t"], ".2f"), fmt(t2s.get("ms_per_step"), ".3f"),
            fmt(t1.get("iterations_mean"), ".1f"), fmt(t1.get("residual_mean"), ".2e"),
            fmt(mj["penetration_max_m"], ".2e"), fmt(t1.get("penetration_max_m"), ".2e")))
    return "\n".join(lines) + "\n"


def machine():
    """CPU model and core count of this machine."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count()}


def report(doc, table, out, indent=2):
    """Print the JSON document and the markdown table; write the table to `out` (a path or
    None). The comparison scripts beside this one (compare_pgs.py, compare_solvers.py) end
    the same way."""
    print(json.dumps(doc, indent=indent))
    print()
    print(table, end="")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(table)
        log("wrote %s" % out)


def parse_args():
    """Command line; resolves the programs, the MuJoCo tool and the scene files."""
    ap = argparse.ArgumentParser(
        description="physd versus MuJoCo on the same MJCF scenes, timed on the same phase.")
    ap.add_argument("files", nargs="*", metavar="FILE.xml", help="scenes (same as --scenes)")
    ap.add_argument("--scenes", nargs="+", metavar="FILE.xml", default=[],
                    help="scene files (replace --set)")
    ap.add_argument("--set", choices=["piles", "articulated", "robots"], default="piles",
                    help="preset scenes (default piles; see the docstring)")
    ap.add_argument("--steps", type=int, default=500, help="timed steps per run (default 500)")
    ap.add_argument("--repeat", type=int, default=3, help="repeats per program (default 3)")
    ap.add_argument("--warmup", type=int, default=1000,
                    help="untimed steps before the timed ones, for both programs (default 1000)")
    ap.add_argument("--stat", choices=["median", "mean"], default="median",
                    help="per-run statistic compared (default median ms per step)")
    ap.add_argument("--build-dir", default=os.environ.get("PHYS_BUILD_DIR",
                                                          os.path.join(ROOT, "build")),
                    help="meson build directory holding bench/physbench and bench/mjbench "
                         "(default $PHYS_BUILD_DIR or build/)")
    ap.add_argument("--physbench", help="physbench binary (default BUILD_DIR/bench/physbench)")
    ap.add_argument("--mjbench", help="mjbench binary (default BUILD_DIR/bench/mjbench)")
    ap.add_argument("--testspeed", default="mujoco-testspeed",
                    help="fallback when mjbench is not built: times from step 0")
    ap.add_argument("--peer-models", default=os.environ.get("PHYS_PEER_MODELS", PEER_DIR_DEFAULT),
                    help="peer scene directory (default $PHYS_PEER_MODELS or "
                         "../shared/peer-models beside the checkout)")
    ap.add_argument("--out", metavar="FILE.md", help="also write the Markdown table here")
    args = ap.parse_args()
    if args.steps < 1 or args.repeat < 1 or args.warmup < 0:
        ap.error("--steps and --repeat must be >= 1, --warmup >= 0")
    args.physbench = args.physbench or os.path.join(args.build_dir, "bench", "physbench")
    args.mjbench = args.mjbench or os.path.join(args.build_dir, "bench", "mjbench")
    if not os.access(args.physbench, os.X_OK):
        ap.error("physbench not found at %s (build it, then pass --build-dir or --physbench)"
                 % args.physbench)
    if os.access(args.mjbench, os.X_OK):
        args.mujoco_tool, args.mujoco_stat = "mjbench", args.stat
    else:
        log("WARNING: mjbench not found at %s (install libmujoco-dev and rebuild); falling back "
            "to mujoco-testspeed, which times from step 0, not the same phase, and reports "
            "means only" % args.mjbench)
        args.mujoco_tool, args.mujoco_stat = "mujoco-testspeed", "mean"
    args.scene_files = args.files + args.scenes or scene_set(args.set, args.peer_models)
    for path in args.scene_files:
        if not os.path.isfile(path):
            ap.error("no such scene file: %s" % path)
    return args


def main():
    """Parse the arguments, run the comparison and print the results."""
    args = parse_args()
    start = time.time()
    scenes = args.scene_files
    entries = [compare_scene(args, p, i + 1, len(scenes)) for i, p in enumerate(scenes)]
    tool = ("mjbench (libmujoco, 1 thread, warm-up as physbench)" if args.mujoco_tool == "mjbench"
            else "mujoco-testspeed (1 thread, from step 0, not the same phase)")
    doc = {"steps": args.steps, "repeat": args.repeat, "warmup": args.warmup,
           "stat": args.mujoco_stat, "mujoco_tool": args.mujoco_tool, "mujoco": tool,
           "machine": machine(), "physbench": args.physbench,
           "mjbench": args.mjbench if args.mujoco_tool == "mjbench" else None,
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "wall_s": round(time.time() - start, 1),
           "scenes": entries}
    report(doc, markdown(doc), args.out)
    return 1 if any(e["errors"] for e in entries) else 0


if __name__ == "__main__":
    sys.exit(main())
