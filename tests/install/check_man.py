#!/usr/bin/python3
"""check_man.py - a manual page describes every option and command its program's --help prints.

    usage: check_man.py PROGRAM MANPAGE

Runs PROGRAM --help and collects each flag (--name, --name.NAME) and, after a "commands:"
line, each command (the first word of a line indented by two spaces, and the words of
"pause | resume"); each must appear in MANPAGE (roff: \\- is read as -). Then, when groff is
installed, formats the page with warnings on (groff -man -ww -z): a warning fails the test.
"""
import re
import shutil
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    prog, page = sys.argv[1], sys.argv[2]
    helptext = subprocess.run([prog, "--help"], check=True, capture_output=True,
                              text=True).stdout
    with open(page, encoding="utf-8") as f:
        roff = f.read()
    man = roff.replace("\\-", "-").replace("\\fB", "").replace("\\fI", "").replace("\\fP", "")
    want = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*(?:\.[A-Za-z]+)?)", helptext))
    in_commands = False
    for line in helptext.splitlines():
        if line.rstrip().endswith("commands:"):
            in_commands = True
            continue
        if in_commands and re.match(r"^\S", line):
            in_commands = False
        m = re.match(r"^  ([a-z][a-z-]*)(?: \| ([a-z][a-z-]*))?(?:\s|$)", line)
        if in_commands and m:
            want.update(("cmd", w) for w in m.groups() if w)
    missing = []
    for w in sorted(want, key=str):
        if isinstance(w, tuple):
            # in bold: on a .B, .BI, .BR or .RB line, or between \fB and \fP
            word = r"(?<![\w-])%s(?![\w-])" % re.escape(w[1])
            if not re.search(r"(^\.(B|BI|BR|RB) [^\n]*%s|\\fB%s\\fP)" % (word, word),
                             roff.replace("\\-", "-"), re.M):
                missing.append("command " + w[1])
        elif not re.search(r"%s(?![\w-])" % re.escape(w), man):
            missing.append("option " + w)
    for m in missing:
        print("check_man: %s: %s --help prints %s, the page does not describe it"
              % (page, prog, m), file=sys.stderr)
    print("check_man: %s: %d options and commands checked, %d missing"
          % (page, len(want), len(missing)))
    bad = len(missing)
    if shutil.which("groff"):
        r = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True)
        if r.returncode != 0 or r.stderr.strip():
            print("check_man: groff warns about %s:\n%s" % (page, r.stderr), file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
