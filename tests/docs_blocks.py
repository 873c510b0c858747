"""The code blocks of a docs page, and running what a page shows.

Note [Docs show real output]
A page's code blocks are of two kinds, told apart by the line before them
and their first line:

- a file: a fenced block right after a line that starts with its name in
  backticks and ends with a colon ("`train.ss`:", "`train.ss` (the case
  ..., without its header):"). It is written, as shown, into the page's
  scratch folder, where a later block may import it or read it.
- a command and what it prints: a fenced block whose first line is
  "$ COMMAND" (`ss ...`, `python3 ...` or `cat FILE`). The command runs in
  the scratch folder, with the files written so far, and what it prints
  (stdout, then stderr) must be the rest of the block, exactly.

docs_errors_test.py takes the first file and the first command of each
docs/errors page; docs_guide_test.py runs every block of the guide's pages
and of docs/porting.md in order, and checks each .ss file no command names
with `ss check`, which must print nothing. So no page shows a program that
does not check, or output that the build does not print.
"""
import os
import re
import shlex
import subprocess

FILE = re.compile(r"^`([\w.-]+\.\w+)`[^\n]*:\n\n```[\w]*\n(.*?)```", re.S | re.M)
COMMAND = re.compile(r"```\n\$ ([^\n]*)\n(.*?)```", re.S)
FENCE = re.compile(r"^ *```[\w]*\n(.*?)^ *```", re.S | re.M)

# The programs a page may show running, and what runs them here: the
# oracles need Debian's python with torch (not pyenv's `python3` on PATH).
PYTHON = "/usr/bin/python3"


def files(text):
    """[(name, content)] of the page's file blocks, in order."""
    return [(m.group(1), m.group(2)) for m in FILE.finditer(text)]


def commands(text):
    """[(command, shown output)] of the page's command blocks, in order."""
    return [(m.group(1), m.group(2)) for m in COMMAND.finditer(text)]


def blocks(text):
    """Every fenced block in page order, as ("file", name, content),
    ("command", command, shown) or ("other", its first line, content)."""
    out = []
    for m in FENCE.finditer(text):
        body = m.group(1)
        before = text[:m.start()]
        label = re.search(r"^`([\w.-]+\.\w+)`[^\n]*:\n\n\Z", before, re.M)
        if label:
            out.append(("file", label.group(1), body))
        elif body.startswith("$ "):
            command, _, shown = body[2:].partition("\n")
            out.append(("command", command, shown))
        else:
            out.append(("other", body.split("\n")[0], body))
    return out


def write(folder, name, content):
    with open(os.path.join(folder, name), "w") as f:
        f.write(content)


def run(ss, command, folder, timeout=60):
    """What [command] prints (stdout, then stderr), run in [folder]."""
    args = shlex.split(command)
    if args[0] == "ss":
        args[0] = ss
    elif args[0] == "python3":
        args[0] = PYTHON
    elif args[0] != "cat":
        return f"(a page may show ss, python3 or cat, not {args[0]})\n"
    r = subprocess.run(args, cwd=folder, capture_output=True, text=True,
                       timeout=timeout)
    return r.stdout + r.stderr


def mismatch(where, command, got, shown):
    """The failure line for a command whose output differs, or None."""
    if got == shown:
        return None
    return (f"{where}: `{command}` prints\n{got}"
            f"but the page shows\n{shown}")


def report(summary, failed):
    """Prints [summary] and each failure; the test's exit status."""
    print(summary)
    for f in failed:
        print("FAIL " + f)
    return 1 if failed else 0
