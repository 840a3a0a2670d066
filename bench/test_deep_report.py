#!/usr/bin/python3
"""test_deep_report.py - physbench --deep-report MM (issue 15's measurement of deep contacts).

On a mixed drop of spheres, cubes and capsules (builtin:mixed_27, from rest into a bin) with a
threshold of 0.5 um, checks that the report agrees with physbench's own figures: its pairs'
contacts add up to contacts_mean x steps, the deepest pair's max_depth_m is penetration_max_m,
steps_over lies between the largest pair's and the step count, every pair is named by two geom
types in order, and the drop's sphere, box and capsule pairs are there. A threshold above the
deepest contact gives no step and no contact over it; no --deep-report, no deep_contacts; a bad
value (0, negative, not a number) is a usage error (exit 2).

    test_deep_report.py PHYSBENCH
"""
import json
import subprocess
import sys

TYPES = ["plane", "sphere", "capsule", "box", "cylinder", "ellipsoid", "mesh", "sdf"]
SCENE = ["builtin:mixed_27", "--steps", "150", "--warmup", "0", "--threads", "1", "--no-sleep",
         "--json"]


def main():
    exe = sys.argv[1]
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + what)
        fails += 0 if cond else 1

    def run(extra):
        r = subprocess.run([exe] + SCENE + extra, capture_output=True, text=True, timeout=300)
        return r.returncode, (json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0
                              else None), r.stderr

    rc, d, err = run(["--deep-report", "0.0005"])
    check(rc == 0, f"--deep-report 0.0005: exit 0 ({rc}: {err.strip()[-200:]})")
    if rc != 0:
        return 1
    dc = d["deep_contacts"]
    pairs = dc["pairs"]
    steps = d["steps"]
    total = sum(p["contacts"] for p in pairs)
    check(total == round(d["contacts_mean"] * steps),
          f"the pairs' contacts add up to contacts_mean x steps ({total})")
    deepest = max(p["max_depth_m"] for p in pairs)
    check(abs(deepest - d["penetration_max_m"]) <= 1e-12 * max(1.0, deepest),
          f"the deepest pair's depth is penetration_max_m ({deepest:.3e} m)")
    check(dc["threshold_m"] == 5e-7 and dc["steps"] == steps, "threshold and steps as asked")
    most = max(p["steps_over"] for p in pairs)
    check(most <= dc["steps_over"] <= steps and dc["steps_over"] > 0,
          f"steps_over {dc['steps_over']} between the largest pair's ({most}) and the steps")
    named = all(len(p["pair"].split("-")) == 2 and
                all(t in TYPES for t in p["pair"].split("-")) and
                TYPES.index(p["pair"].split("-")[0]) <= TYPES.index(p["pair"].split("-")[1])
                for p in pairs)
    check(named, "every pair is two geom types in order: " + ", ".join(p["pair"] for p in pairs))
    check(all(0 <= p["contacts_over"] <= p["contacts"] and p["steps_over"] <= steps
              for p in pairs), "per pair: contacts over <= contacts, steps over <= steps")
    check(all(("worst_step" in p) == (p["max_depth_m"] > 0) for p in pairs),
          "a pair that penetrated names its worst step and bodies")
    for want in ("plane-sphere", "plane-box", "box-box", "sphere-capsule"):
        check(any(p["pair"] == want for p in pairs), f"the drop has {want} contacts")

    above = 1e3 * d["penetration_max_m"] * 1.5 + 1e-6
    rc, d2, err = run(["--deep-report", repr(above)])
    ok = rc == 0 and d2["deep_contacts"]["steps_over"] == 0 and all(
        p["contacts_over"] == 0 and p["steps_over"] == 0 for p in d2["deep_contacts"]["pairs"])
    check(ok, f"a threshold over the deepest contact ({above:.4f} mm): nothing over it")
    rc, d3, err = run([])
    check(rc == 0 and "deep_contacts" not in d3, "no --deep-report: no deep_contacts")
    for bad in ("0", "-1", "abc", "nan"):
        rc, _, err = run(["--deep-report", bad])
        check(rc == 2 and "--deep-report" in err, f"--deep-report {bad}: usage error ({rc})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
