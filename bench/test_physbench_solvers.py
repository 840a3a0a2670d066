#!/usr/bin/python3
"""test_physbench_solvers.py - physbench --solver NAME runs every solver of the table (issue 9).

For each name `physbench --list-solvers` prints, runs a settling box stack with that solver and
checks: exit 0, the JSON names the solver, the residual it reached (residual_mean, residual_max)
is finite and below 1e-2, and the stack stands (penetration_max_m under 5 mm); firstorder's
solver_stats carry its radius residual and cone excess. A --set option
the solver reads appears among its solver_options; `--set` of a bad value is a usage error.

    test_physbench_solvers.py PHYSBENCH
"""
import json
import math
import subprocess
import sys


def main():
    exe = sys.argv[1]
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + what)
        fails += 0 if cond else 1

    listed = subprocess.run([exe, "--list-solvers"], capture_output=True, text=True, timeout=60)
    names = [ln.split()[0] for ln in listed.stdout.splitlines()
             if ln.strip() and not ln.startswith(" ")]
    check(len(names) >= 10, f"--list-solvers names the table's solvers: {names}")
    for name in names:
        run = subprocess.run([exe, "builtin:box_stack_10", "--solver", name, "--steps", "20",
                              "--warmup", "40", "--threads", "1", "--no-sleep", "--json"],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            check(False, f"{name}: exit 0 ({run.returncode}: {run.stderr.strip()[-200:]})")
            continue
        d = json.loads(run.stdout.strip().splitlines()[-1])
        rmean, rmax, pen = d.get("residual_mean"), d.get("residual_max"), d.get("penetration_max_m")
        check(d.get("solver") == name and all(isinstance(v, (int, float)) and math.isfinite(v)
                                              for v in (rmean, rmax, pen))
              and rmax < 1e-2 and pen < 5e-3,
              f"{name}: reports its residual {rmean:.2e} (worst {rmax:.2e}), penetration "
              f"{pen:.1e} m" if d.get("solver") == name and rmax is not None
              else f"{name}: the JSON names the solver and its residual ({d.get('solver')})")
        if name == "firstorder":
            # its own figures: how far the lagged friction radii ended from their fixed point,
            # and the worst cone excess (<= 0 inside the cone) of a settling stack
            st = d.get("solver_stats", {})
            rr, ce = st.get("radius_residual_max"), st.get("cone_excess_max")
            ci = st.get("cone_excess_island_max")
            pd = st.get("predicted_directions_per_step")
            check(isinstance(rr, (int, float)) and 0.0 <= rr < 1e-2 and
                  isinstance(ce, (int, float)) and ce < 1e-3 and
                  isinstance(ci, (int, float)) and ci < 1e-3 and
                  isinstance(pd, (int, float)) and pd >= 0.0,
                  f"firstorder: solver_stats radius_residual_max {rr}, cone_excess_max {ce}, "
                  f"cone_excess_island_max {ci}, predicted_directions_per_step {pd}")
    run = subprocess.run([exe, "builtin:box_stack_10", "--solver", "canal", "--steps", "2", "--threads", "1",
                          "--set", "canal.kappa=20", "--json"],
                         capture_output=True, text=True, timeout=120)
    opts = json.loads(run.stdout.strip().splitlines()[-1]).get("solver_options", {}) \
        if run.returncode == 0 else {}
    check(opts.get("canal.kappa") == 20, f"--set canal.kappa=20 is in force ({opts.get('canal.kappa')})")
    bad = subprocess.run([exe, "builtin:box_stack_10", "--solver", "canal", "--set",
                          "canal.kappa=0.5"], capture_output=True, text=True, timeout=60)
    check(bad.returncode == 2 and "canal.kappa" in bad.stderr and bad.stdout == "",
          f"--set out of range: exit 2 naming the option ({bad.returncode}: {bad.stderr.strip()[:100]})")
    print(f"{fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
