#!/usr/bin/python3
"""check_deploy.py - the deployment recipes (docs/deploy.md) stay true to the daemon they ship.

    usage: check_deploy.py PHYSD CONTAINERFILE KUBERNETES_YAML

Neither a container engine nor a cluster runs here, so this checks what can be checked:
  - the Containerfile's runtime stage installs, for every shared library PHYSD needs
    (readelf's NEEDED entries, found through ldd; a sanitizer build's runtimes left out), the
    Debian package that holds it on this machine (dpkg -S), and the flags of its CMD are flags of `PHYSD --help`;
  - the Kubernetes objects parse (python3-yaml): a Service and a StatefulSet; each flag of the
    physd container's args is one of `PHYSD --help`; its --http port is the containerPort
    named `http`, which the probes use: startup and liveness GET /healthz, readiness GET
    /readyz; the grace period is at least the preStop pause plus shutdown_drain_ms' default
    (3 s).
Exit status 0 pass, 1 fail, 77 skip (no readelf, ldd or dpkg; no python3-yaml).
"""
import re
import shutil
import subprocess
import sys


def fail(msg):
    print("FAIL " + msg)
    return 1


def flags_of(args):
    return [a for a in args if a.startswith("--")]


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    physd, containerfile, kyaml = sys.argv[1:]
    if not all(shutil.which(t) for t in ("readelf", "ldd", "dpkg")):
        print("SKIP: readelf, ldd or dpkg missing")
        return 77
    try:
        import yaml
    except ImportError:
        print("SKIP: python3-yaml is not installed")
        return 77
    bad = 0
    helptext = subprocess.run([physd, "--help"], capture_output=True, text=True, check=True).stdout
    known = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", helptext))

    # the runtime packages against the libraries physd needs
    with open(containerfile) as f:
        text = f.read()
    stages = text.split("\nFROM ")
    run_stage = stages[-1]
    installed = set(re.findall(r"[a-z0-9][a-z0-9.+-]+", " ".join(
        re.findall(r"apt-get install[^&]*", run_stage.replace("\\\n", " ")))))
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]",
                        subprocess.run(["readelf", "-d", physd], capture_output=True,
                                       text=True).stdout)
    paths = dict(re.findall(r"^\s*(\S+) => (\S+)", subprocess.run(
        ["ldd", physd], capture_output=True, text=True).stdout, re.M))
    for lib in needed:
        if lib.startswith(("libc.so", "libm.so", "ld-linux")) or lib not in paths:
            continue  # libc6: in every Debian image
        if lib.startswith(("libasan.", "libubsan.", "libtsan.", "liblsan.")):
            continue  # a sanitizer build's runtime (CI runs this test in one): no shipped physd
        real = subprocess.run(["readlink", "-f", paths[lib]], capture_output=True,
                              text=True).stdout.strip()
        owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True)
        pkg = owner.stdout.split(":")[0].strip()
        if owner.returncode != 0:
            bad += fail("%s (%s) belongs to no Debian package here" % (lib, real))
        elif pkg not in installed:
            bad += fail("%s is in %s, which the Containerfile's runtime stage does not install"
                        % (lib, pkg))
        else:
            print("ok   %s <- %s" % (lib, pkg))
    cmd = re.search(r"^CMD (\[.*?\])\s*$", run_stage.replace("\\\n", " "), re.M | re.S)
    if not cmd:
        bad += fail("no CMD in the Containerfile")
    else:
        for fl in flags_of(yaml.safe_load(cmd.group(1))):
            if fl not in known:
                bad += fail("Containerfile CMD flag %s is not in physd --help" % fl)

    # the Kubernetes objects
    docs = list(yaml.safe_load_all(open(kyaml)))
    kinds = [d["kind"] for d in docs]
    if kinds != ["Service", "StatefulSet"]:
        return fail("objects %s, want Service and StatefulSet" % kinds)
    sts = docs[1]["spec"]["template"]["spec"]
    c = [x for x in sts["containers"] if x["name"] == "physd"][0]
    args = c["args"]
    for fl in flags_of(args):
        if fl not in known:
            bad += fail("container flag %s is not in physd --help" % fl)
    port = int(args[args.index("--http") + 1])
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    if ports.get("http") != port:
        bad += fail("containerPort http %r != --http %d" % (ports.get("http"), port))
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"),
                        ("readinessProbe", "/readyz")):
        g = c.get(probe, {}).get("httpGet", {})
        if g.get("path") != path or g.get("port") != "http":
            bad += fail("%s is %r, want GET %s on port http" % (probe, g, path))
    pause = int(c["lifecycle"]["preStop"]["exec"]["command"][1])
    if sts["terminationGracePeriodSeconds"] < pause + 3:
        bad += fail("grace period %d < preStop %d s + the 3 s drain" %
                    (sts["terminationGracePeriodSeconds"], pause))
    print("ok   Kubernetes objects: %s; probes on port %d" % (kinds, port))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
