#!/usr/bin/python3
"""check_shared_exports.py - an installed shared library exports its public API and nothing else.

    usage: check_shared_exports.py LIB.so PREFIX HEADER|DIR...

The dynamic symbols LIB.so defines (nm -D --defined-only) must be exactly the functions and
variables the public HEADERs (or every *.h of a DIR) declare, all named PREFIX<letter or digit>...: an internal
PREFIX_... (two underscores), a helper of another name or a linked-in library (the protocol
code in libphysclient) must stay local, which the library's linker version script
(solver/libphys.map, clients/c/libphysclient.map) ensures. Both directions fail the test: a
symbol exported but not declared, and a function declared but not exported (a header names
it, the version script hid it). SKIP (77) without nm.
"""
import glob
import os
import re
import shutil
import subprocess
import sys


def declared(headers, prefix):
    """Names PREFIX... declared as functions or extern variables in the headers (comments
    stripped; function-pointer typedefs such as (*prefix_cb) are not functions)."""
    names = set()
    paths = []
    for h in headers:
        paths += sorted(glob.glob(os.path.join(h, "*.h"))) if os.path.isdir(h) else [h]
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        for m in re.finditer(r"(?<!\(\*)(?<!\w)(%s[A-Za-z0-9]\w*)\s*\(" % re.escape(prefix), text):
            names.add(m.group(1))
        for m in re.finditer(r"^[ \t]*extern[ \t][^;(\n{\"]*?\b(%s[A-Za-z0-9]\w*)[ \t]*"
                             r"(?:\[[^\]\n]*\])?[ \t]*;" % re.escape(prefix), text, re.M):
            names.add(m.group(1))
    return names


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    lib, prefix, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    if shutil.which("nm") is None:
        print("check_shared_exports: nm (binutils) not found: SKIP")
        return 77
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    exported = set()
    for line in out.splitlines():
        parts = line.split()
        # "ADDR TYPE NAME[@@VERSION]"; type A is the version node itself (PHYS_0)
        if len(parts) == 3 and parts[1] != "A":
            exported.add(parts[2].split("@")[0])
    want = declared(headers, prefix)
    bad = 0
    for s in sorted(exported - want):
        why = ("internal (two underscores)" if s.startswith(prefix + "_") else
               "not declared in a public header" if s.startswith(prefix) else
               "outside the %s namespace" % prefix)
        print("check_shared_exports: %s exports %s: %s" % (lib, s, why), file=sys.stderr)
        bad += 1
    for s in sorted(want - exported):
        print("check_shared_exports: %s does not export %s, which a public header declares"
              % (lib, s), file=sys.stderr)
        bad += 1
    print("check_shared_exports: %s: %d symbols exported, %d declared, %d wrong"
          % (lib, len(exported), len(want), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
