#!/usr/bin/python3
"""Thread scaling of physd's step: 1 thread against 2 (or --threads) on the same scenes, in one run.

For each scene, R times over, in alternation:
  physbench SCENE --warmup W --steps N --threads 1 --no-sleep --json
  physbench SCENE --warmup W --steps N --threads T --no-sleep --json
and the median over the repeats of each run's median and p95 ms per step. The speed-up is
1-thread median / T-thread median (> 1: the threads pay). With --load K, K busy processes (one
spinning Python loop each) run beside every timed run, as another program on the machine would;
the script then also reports the p95 ratio T-thread / 1-thread, which should stay small.

Both runs of a scene report their state hash: they must be equal (results are bit-identical for
any thread count), and the script says so when they are not.

Default scenes: the settled box pile and the pyramid of the shared peer models (when found),
MuJoCo's 22_humanoids and humanoid100 (Debian's libmujoco-samples), physd's quadrupeds8 world,
and the built-in mixed_216 drop. Prints a JSON document, then a Markdown table, on stdout;
progress goes to stderr.
"""

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MUJOCO_MODELS = "/usr/share/mujoco/model"


def log(msg):
    """Progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


def default_scenes(peer_dir):
    """The scenes the thread-scaling targets are set on, those that exist here."""
    scenes = []
    if peer_dir and os.path.isdir(peer_dir):
        scenes += [os.path.join(peer_dir, n + ".xml")
                   for n in ("pile_boxes_512_settled", "pyramid_wall_20")]
    scenes += [os.path.join(MUJOCO_MODELS, "humanoid", "22_humanoids.xml"),
               os.path.join(MUJOCO_MODELS, "humanoid100", "humanoid100.xml"),
               os.path.join(ROOT, "configs", "worlds", "quadrupeds8.xml"),
               "builtin:mixed_216"]
    return [s for s in scenes if s.startswith("builtin:") or os.path.exists(s)]


def spin():
    """A busy process: the load another program puts on the machine."""
    while True:
        pass


def run_physbench(bench, scene, threads, args):
    """One physbench run; returns its JSON report."""
    cmd = [bench, scene, "--warmup", str(args.warmup), "--steps", str(args.steps),
           "--threads", str(threads), "--no-sleep", "--json"] + args.extra
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout
    return json.loads(out)


def measure(bench, scene, args):
    """Medians over the repeats of the 1-thread and T-thread runs of one scene."""
    runs = {1: [], args.threads: []}
    for r in range(args.repeat):
        for t in (1, args.threads):
            log(f"  {os.path.basename(scene)} threads {t} repeat {r + 1}/{args.repeat}")
            runs[t].append(run_physbench(bench, scene, t, args))
    row = {"scene": scene}
    for t, reports in runs.items():
        key = f"t{t}"
        row[key + "_median_ms"] = statistics.median(d["ms_per_step_median"] for d in reports)
        row[key + "_p95_ms"] = statistics.median(d["ms_per_step_p95"] for d in reports)
        row[key + "_hash"] = reports[-1]["state_hash"]
        row[key + "_stages_ms"] = reports[-1].get("stage_ms")
    t1, tn = row["t1_median_ms"], row[f"t{args.threads}_median_ms"]
    row["speedup"] = t1 / tn if tn > 0 else 0.0
    row["p95_ratio"] = row[f"t{args.threads}_p95_ms"] / row["t1_p95_ms"]
    row["bit_identical"] = row["t1_hash"] == row[f"t{args.threads}_hash"]
    return row


def markdown(rows, args):
    """The table of the run."""
    t = args.threads
    lines = [f"| scene | 1 thread ms | {t} threads ms | speed-up | 1 thread p95 | "
             f"{t} threads p95 | p95 ratio |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        name = os.path.basename(r["scene"])
        lines.append(f"| {name} | {r['t1_median_ms']:.3f} | {r[f't{t}_median_ms']:.3f} | "
                     f"{r['speedup']:.2f} | {r['t1_p95_ms']:.3f} | {r[f't{t}_p95_ms']:.3f} | "
                     f"{r['p95_ratio']:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes", nargs="*", help="MJCF/URDF files or builtin:NAME (default: see above)")
    ap.add_argument("--build-dir", default=os.environ.get("PHYS_BUILD_DIR",
                                                          os.path.join(ROOT, "build")))
    ap.add_argument("--peer-models", default=os.environ.get(
        "PHYS_PEER_MODELS", os.path.join(os.path.dirname(ROOT), "shared", "peer-models")))
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="the team size compared with 1")
    ap.add_argument("--load", type=int, default=0, help="busy processes beside the runs")
    ap.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                    help="more physbench arguments (last)")
    args = ap.parse_args()
    bench = os.path.join(args.build_dir, "bench", "physbench")
    if not os.access(bench, os.X_OK):
        sys.exit(f"scaling.py: {bench} not found; build first (meson setup build && ninja -C build)")
    scenes = args.scenes or default_scenes(args.peer_models)
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.load)]
    for p in spinners:
        p.start()
    try:
        rows = [measure(bench, s, args) for s in scenes]
    finally:
        for p in spinners:
            p.terminate()
    doc = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
           "steps": args.steps, "warmup": args.warmup, "repeat": args.repeat,
           "threads": args.threads, "load": args.load,
           "env_OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", ""), "rows": rows}
    print(json.dumps(doc, indent=1))
    print()
    print(markdown(rows, args))
    for r in rows:
        if not r["bit_identical"]:
            log(f"scaling.py: {r['scene']}: state hashes differ between thread counts")
    return 0 if all(r["bit_identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
