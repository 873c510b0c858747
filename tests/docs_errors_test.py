#!/usr/bin/python3
"""Every docs/errors/<CODE>.md page shows real output.

Each page has a wrong program (a fenced block after "`name.ss`:") and what
`ss check` prints for it (a fenced block starting "$ ss ..."). This runs the
command shown on the program shown, in a scratch folder, and compares the
output exactly. A page whose output is still a plan says so on a line
"(checked once ... lands)" and is listed, not compared.

usage: docs_errors_test.py SS_BINARY DOCS_ERRORS_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

PROGRAM = re.compile(r"`([\w.-]+\.ss)`[^\n]*:\n\n```\n(.*?)```", re.S)
SHOWN = re.compile(r"```\n\$ (ss [^\n]*)\n(.*?)```", re.S)
PLANNED = re.compile(r"^\(checked once .* lands\)$", re.M)


def main():
    ss, folder = os.path.abspath(sys.argv[1]), sys.argv[2]
    failed, compared, planned = [], 0, []
    for page in sorted(os.listdir(folder)):
        if not re.fullmatch(r"E\d{4}\.md", page):
            continue
        text = open(os.path.join(folder, page)).read()
        if PLANNED.search(text):
            planned.append(page)
            continue
        prog, shown = PROGRAM.search(text), SHOWN.search(text)
        if not prog or not shown:
            failed.append(f"{page}: no program or no shown output")
            continue
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, prog.group(1)), "w") as f:
                f.write(prog.group(2))
            args = shlex.split(shown.group(1))[1:]
            r = subprocess.run([ss] + args, cwd=d, capture_output=True,
                               text=True, timeout=60)
        compared += 1
        got = r.stdout + r.stderr
        if got != shown.group(2):
            failed.append(f"{page}: `{shown.group(1)}` prints\n{got}"
                          f"but the page shows\n{shown.group(2)}")
    print(f"{compared} pages compared; still planned: {', '.join(planned)}")
    for f in failed:
        print("FAIL " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
