#!/usr/bin/python3
"""Compare physd's step time with MuJoCo 2.2.2 on the same MJCF scenes, side by side in one run.

For each scene file, R times over, in alternation:
  mujoco-testspeed FILE N 1 0                         (MuJoCo, one thread)
  physbench FILE --warmup W --steps N --threads 1 --no-sleep --json
  physbench FILE --warmup W --steps N --threads 2 --no-sleep --json
  physbench FILE --warmup W --steps N --threads 2 --json          (sleeping on)
then the median over the R repeats of each. Both programs time N steps of the same scene;
physbench first runs W untimed steps, in which it removes the millimetre overlaps that MuJoCo's
soft contacts leave in the settled piles (the penetration it reports is measured after them). mujoco-testspeed reports the mean time per step, so the table compares it with
physbench's mean (ms_per_step_mean); the JSON keeps physbench's median and p95 too.

  ratio = physd steps/s / MuJoCo steps/s = MuJoCo ms per step / physd ms per step  (> 1: faster)

Default scenes: the settled piles and the pyramid of ../shared/peer-models when that directory
exists, else the unsettled piles written by bench/gen_scenes.py into bench/scenes/ (made on
demand). Prints a JSON document, then a Markdown table, on stdout; progress goes to stderr.
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
PEER_DIR = os.path.join(os.path.dirname(ROOT), "shared", "peer-models")
PEER_SCENES = ["pile_spheres_512_settled", "pile_boxes_512_settled",
               "pile_spheres_1000_frictionless_settled", "pyramid_wall_20"]
GEN_SCENES = ["pile_spheres_512", "pile_boxes_512", "pile_spheres_1000_frictionless",
              "pyramid_wall_20"]

# physbench configurations: (key, threads, sleep)
CONFIGS = [("t1", 1, False), ("t2", 2, False), ("t2_sleep", 2, True)]


def log(msg):
    """Progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def default_scenes():
    """Peer files when ../shared/peer-models exists, else gen_scenes.py's (generated if missing)."""
    if os.path.isdir(PEER_DIR):
        return [os.path.join(PEER_DIR, n + ".xml") for n in PEER_SCENES]
    out = os.path.join(HERE, "scenes")
    files = [os.path.join(out, n + ".xml") for n in GEN_SCENES]
    if not all(os.path.exists(f) for f in files):
        log("generating scenes with bench/gen_scenes.py")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_scenes.py"), "--out", out]
                       + GEN_SCENES, check=True, stdout=subprocess.DEVNULL)
    return files


def run_mujoco(testspeed, path, steps):
    """One mujoco-testspeed run: {"ms": mean ms per step, "contacts": contacts per step}."""
    proc = subprocess.run([testspeed, path, str(steps), "1", "0"], capture_output=True,
                          text=True, check=False)
    text = proc.stdout + proc.stderr
    ms = re.search(r"Time per step\s*:\s*([0-9.eE+-]+)\s*ms", text)
    contacts = re.search(r"Contacts per step\s*:\s*([0-9.eE+-]+)", text)
    if proc.returncode != 0 or not ms:
        raise RuntimeError("mujoco-testspeed failed on %s: %s" % (path, text.strip()[-500:]))
    return {"ms": float(ms.group(1)), "contacts": float(contacts.group(1)) if contacts else None}


def run_physbench(physbench, path, steps, threads, sleep, warmup):
    """One physbench run; returns its JSON report."""
    cmd = [physbench, path, "--steps", str(steps), "--threads", str(threads), "--json",
           "--warmup", str(warmup)]
    if not sleep:
        cmd.append("--no-sleep")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s"
                           % (" ".join(cmd), proc.returncode, proc.stderr.strip()[-500:]))
    return json.loads(proc.stdout)


def median_or_none(values):
    """Median of the non-None values, or None."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def compare_scene(args, path, index, total):
    """All runs of one scene, alternating the programs; returns the scene's JSON entry."""
    name = os.path.splitext(os.path.basename(path))[0]
    mujoco, bench = [], {key: [] for key, _, _ in CONFIGS}
    errors = []
    for rep in range(args.repeat):
        tag = "[%d/%d %s rep %d/%d]" % (index, total, name, rep + 1, args.repeat)
        try:
            log("%s mujoco-testspeed" % tag)
            mujoco.append(run_mujoco(args.testspeed, path, args.steps))
        except (RuntimeError, OSError) as e:
            errors.append(str(e))
        for key, threads, sleep in CONFIGS:
            try:
                log("%s physbench %s" % (tag, key))
                bench[key].append(run_physbench(args.physbench, path, args.steps, threads, sleep,
                                                args.warmup))
            except (RuntimeError, OSError, ValueError) as e:
                errors.append(str(e))
    entry = {"scene": name, "file": path,
             "mujoco": {"ms_per_step": median_or_none([m["ms"] for m in mujoco]),
                        "runs_ms": [m["ms"] for m in mujoco],
                        "contacts_per_step": median_or_none([m["contacts"] for m in mujoco])},
             "physbench": {}, "errors": errors}
    mj_ms = entry["mujoco"]["ms_per_step"]
    for key, threads, sleep in CONFIGS:
        runs = bench[key]
        if not runs:
            entry["physbench"][key] = None
            continue
        last = runs[-1]
        ms = median_or_none([r["ms_per_step_mean"] for r in runs])
        entry["physbench"][key] = {
            "threads": threads, "sleep": sleep, "bodies": last.get("bodies"),
            "ms_per_step": ms,
            "ms_per_step_median": median_or_none([r["ms_per_step_median"] for r in runs]),
            "ms_per_step_p95": median_or_none([r["ms_per_step_p95"] for r in runs]),
            "runs_ms": [r["ms_per_step_mean"] for r in runs],
            "ratio": mj_ms / ms if mj_ms and ms else None,
            "contacts_mean": last.get("contacts_mean"),
            "iterations_mean": last.get("iterations_mean"),
            "iterations_max": last.get("iterations_max"),
            "residual_mean": last.get("residual_mean"),
            "penetration_max_m": last.get("penetration_max_m"),
            "bodies_asleep_end": last.get("bodies_asleep_end"),
            "allocations_during_steps": last.get("allocations_during_steps"),
            "state_hash": last.get("state_hash"),
        }
    return entry


def fmt(value, spec):
    """Format a number for the table, or "n/a"."""
    return "n/a" if value is None else format(value, spec)


def markdown(doc):
    """The Markdown table of a comparison document."""
    lines = [
        "Steps per run: %d, repeats: %d (medians), %s, %s cores. ratio = physd steps/s / "
        "MuJoCo steps/s (> 1: physd faster); mean ms per step as reported by mujoco-testspeed."
        % (doc["steps"], doc["repeat"], doc["machine"]["cpu"], doc["machine"]["cores"]),
        "",
        "| scene | MuJoCo ms/step | physbench 1 thread ms | ratio | 2 threads ms | ratio "
        "| 2 threads sleep on ms | iterations | residual | penetration |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in doc["scenes"]:
        t1, t2, t2s = (s["physbench"].get(k) or {} for k, _, _ in CONFIGS)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s["scene"], fmt(s["mujoco"]["ms_per_step"], ".3f"),
            fmt(t1.get("ms_per_step"), ".3f"), fmt(t1.get("ratio"), ".2f"),
            fmt(t2.get("ms_per_step"), ".3f"), fmt(t2.get("ratio"), ".2f"),
            fmt(t2s.get("ms_per_step"), ".3f"),
            fmt(t1.get("iterations_mean"), ".1f"), fmt(t1.get("residual_mean"), ".2e"),
            fmt(t1.get("penetration_max_m"), ".2e")))
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


def main():
    """Parse the arguments, run the comparison and print the results."""
    ap = argparse.ArgumentParser(description="physd versus MuJoCo on the same MJCF scenes.")
    ap.add_argument("scenes", nargs="*", metavar="FILE.xml", help="scenes (default: see above)")
    ap.add_argument("--steps", type=int, default=500, help="steps per run (default 500)")
    ap.add_argument("--repeat", type=int, default=3, help="repeats per program (default 3)")
    ap.add_argument("--warmup", type=int, default=1000,
                    help="untimed physbench steps before the timed ones (default 1000): the "
                         "settled peer piles start with MuJoCo's soft-contact overlaps (4-8 mm), "
                         "which physd removes during the warm-up")
    ap.add_argument("--physbench", default=os.path.join(ROOT, "build", "bench", "physbench"),
                    help="physbench binary (default build/bench/physbench)")
    ap.add_argument("--testspeed", default="mujoco-testspeed", help="MuJoCo's testspeed binary")
    ap.add_argument("--out", metavar="FILE.md", help="also write the Markdown table here")
    args = ap.parse_args()
    if args.steps < 1 or args.repeat < 1:
        ap.error("--steps and --repeat must be >= 1")
    if not os.access(args.physbench, os.X_OK):
        ap.error("physbench not found at %s (build it: scripts/test.sh, or pass --physbench)"
                 % args.physbench)
    scenes = args.scenes or default_scenes()
    for path in scenes:
        if not os.path.isfile(path):
            ap.error("no such scene file: %s" % path)

    start = time.time()
    entries = [compare_scene(args, p, i + 1, len(scenes)) for i, p in enumerate(scenes)]
    doc = {"steps": args.steps, "repeat": args.repeat, "warmup": args.warmup, "machine": machine(),
           "mujoco": "2.2.2 (mujoco-testspeed, 1 thread)", "physbench": args.physbench,
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "wall_s": round(time.time() - start, 1),
           "scenes": entries}
    table = markdown(doc)
    print(json.dumps(doc, indent=2))
    print()
    print(table, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(table)
        log("wrote %s" % args.out)
    return 1 if any(e["errors"] for e in entries) else 0


if __name__ == "__main__":
    sys.exit(main())
