#!/usr/bin/env python3
"""plot_singlestep.py - draw singlestep's CSV: residual against iterations and against solve time.

    bench/plot_singlestep.py PREFIX [--out FILE.png] [--title TEXT]

Reads PREFIX.csv (bench/singlestep's output: one line per case, solver and iteration cap) and
writes a PNG (default PREFIX.png) with two panels in the form of paper 002's Figs. 7, 9 and 11:
the accuracy metric (sec. 7, worst island; log scale) against the iteration cap, and against the
median solve time of that cap, one line per solver; with several cases, the median over cases
and a band from the lowest to the highest case. Needs Debian's python3-matplotlib.
Exit status: 0 ok, 1 unreadable input, 2 bad arguments, 3 matplotlib missing.
"""
import argparse
import csv
import statistics
import sys


def read_rows(path):
    """{solver: {cap: [(residual, solve_ms) per case]}} in file order of solvers."""
    table = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            caps = table.setdefault(row["solver"], {})
            caps.setdefault(int(row["cap"]), []).append(
                (float(row["residual"]), float(row["solve_ms"])))
    return table


def series(caps):
    """caps, median residual, lowest, highest, median solve ms: sorted by cap."""
    xs = sorted(caps)
    med = [statistics.median(r for r, _ in caps[c]) for c in xs]
    lo = [min(r for r, _ in caps[c]) for c in xs]
    hi = [max(r for r, _ in caps[c]) for c in xs]
    ms = [statistics.median(t for _, t in caps[c]) for c in xs]
    return xs, med, lo, hi, ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("prefix", help="singlestep's --out PREFIX (reads PREFIX.csv)")
    ap.add_argument("--out", help="PNG to write (default PREFIX.png)")
    ap.add_argument("--title", help="figure title (default: the prefix)")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_singlestep: matplotlib is missing (Debian: apt install python3-matplotlib)",
              file=sys.stderr)
        return 3
    try:
        table = read_rows(args.prefix + ".csv")
    except (OSError, KeyError, ValueError) as e:
        print(f"plot_singlestep: cannot read {args.prefix}.csv: {e}", file=sys.stderr)
        return 1
    if not table:
        print(f"plot_singlestep: {args.prefix}.csv has no rows", file=sys.stderr)
        return 1

    fig, (ax_it, ax_ms) = plt.subplots(1, 2, figsize=(11, 4.2))
    for solver, caps in table.items():
        xs, med, lo, hi, ms = series(caps)
        floor = 1e-16  # a residual of exactly 0 on a log axis
        med = [max(v, floor) for v in med]
        line, = ax_it.plot(xs, med, label=solver)
        if any(a != b for a, b in zip(lo, hi)):
            ax_it.fill_between(xs, [max(v, floor) for v in lo], [max(v, floor) for v in hi],
                               color=line.get_color(), alpha=0.15)
        ax_ms.plot(ms, med, label=solver, color=line.get_color())
    for ax, xlabel in ((ax_it, "iterations"), (ax_ms, "solve time [ms]")):
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("residual (paper 002 sec. 7)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(args.title or args.prefix)
    fig.tight_layout()
    out = args.out or args.prefix + ".png"
    fig.savefig(out, dpi=110)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
