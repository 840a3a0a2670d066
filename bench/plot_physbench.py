#!/usr/bin/env python3
"""plot_physbench.py - draw a physbench run: step time over the run, each step's residual and
iterations, and (with --trace) the residual per iteration of the last step's largest island.

    physbench FILE --series [--trace] --json > run.json
    bench/plot_physbench.py run.json [--out FILE.png] [--title TEXT]

Reads physbench's JSON (a file, or - for stdin) made with --series, and writes a PNG (default:
the JSON's name with .png): the wall time of each timed step with its median; each step's worst
accuracy metric (paper 002 sec. 7, log scale) with the tolerance and its most iterations of an
island against the cap; and, when the JSON has residual_trace (physbench --trace), the metric
after every iteration of the last step's largest island. Needs Debian's python3-matplotlib.
Exit status: 0 ok, 1 unreadable input or no --series in it, 2 bad arguments, 3 matplotlib
missing.
"""
import argparse
import json
import os
import statistics
import sys


def load(path):
    """physbench's JSON from `path` ("-": stdin)."""
    if path == "-":
        return json.load(sys.stdin)
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", help="physbench --series --json output (- for stdin)")
    ap.add_argument("--out", help="PNG to write (default: JSON's name with .png)")
    ap.add_argument("--title", help="figure title (default: the scene and solver)")
    args = ap.parse_args()
    if args.json == "-" and not args.out:
        ap.error("--out is needed when the JSON comes from stdin")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_physbench: matplotlib is missing (Debian: apt install python3-matplotlib)",
              file=sys.stderr)
        return 3
    try:
        run = load(args.json)
        ms, res, its = run["step_ms"], run["step_residual"], run["step_iterations"]
    except (OSError, ValueError) as e:
        print(f"plot_physbench: cannot read {args.json}: {e}", file=sys.stderr)
        return 1
    except KeyError:
        print(f"plot_physbench: {args.json} has no per-step series (run physbench with --series)",
              file=sys.stderr)
        return 1
    if not ms:
        print(f"plot_physbench: {args.json} has no timed steps", file=sys.stderr)
        return 1
    trace = run.get("residual_trace")
    warm = run.get("warmup", 0)
    steps = [warm + 1 + i for i in range(len(ms))]
    floor = 1e-16  # a residual of exactly 0 on a log axis

    panels = 3 if trace else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.0))
    ax_ms, ax_res = axes[0], axes[1]
    ax_ms.plot(steps, ms, lw=0.6, label="step")
    med = statistics.median(ms)
    ax_ms.axhline(med, color="k", ls="--", lw=0.8, label=f"median {med:.3g} ms")
    ax_ms.set_xlabel("step")
    ax_ms.set_ylabel("wall time per step [ms]")
    ax_ms.set_title(f"{run.get('threads', '?')} thread(s)")
    ax_ms.legend()

    ax_res.plot(steps, [max(r, floor) for r in res], lw=0.6, color="tab:red", label="worst residual")
    if run.get("tolerance"):
        ax_res.axhline(run["tolerance"], color="tab:red", ls="--", lw=0.8, label="tolerance")
    ax_res.set_yscale("log")
    ax_res.set_xlabel("step")
    ax_res.set_ylabel("residual (paper 002 sec. 7)")
    ax_it = ax_res.twinx()
    ax_it.plot(steps, its, lw=0.6, color="tab:green", alpha=0.6, label="most iterations")
    if run.get("max_iterations"):
        ax_it.axhline(run["max_iterations"], color="tab:green", ls=":", lw=0.8)
    ax_it.set_ylabel("iterations (an island's most)")
    lines = ax_res.get_legend_handles_labels()
    lines2 = ax_it.get_legend_handles_labels()
    ax_res.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper right")

    if trace:
        ax_tr = axes[2]
        ax_tr.plot(range(1, len(trace) + 1), [max(r, floor) for r in trace], marker=".")
        ax_tr.set_yscale("log")
        ax_tr.set_xlabel("iteration")
        ax_tr.set_ylabel("residual")
        ax_tr.set_title(f"last step, largest island ({run.get('trace_island_rows', '?')} rows)")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    scene = os.path.basename(str(run.get("scene", "")))
    fig.suptitle(args.title or f"{scene}, {run.get('solver', '?')}")
    fig.tight_layout()
    out = args.out or os.path.splitext(args.json)[0] + ".png"
    fig.savefig(out, dpi=100)
    print(f"plot_physbench: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
