#!/usr/bin/python3
"""Every docs/errors/<CODE>.md page shows real output.

Each page has a wrong program (a fenced block after "`name.ss`:") and what
`ss check` prints for it (a fenced block starting "$ ss ..."). This runs the
command shown on the program shown, in a scratch folder, and compares the
output exactly (Note [Docs show real output] in docs_blocks.py). A page
whose output is still a plan says so on a line "(checked once ... lands)"
and is listed, not compared.

usage: docs_errors_test.py SS_BINARY DOCS_ERRORS_DIR
"""
import os
import re
import sys
import tempfile

import docs_blocks

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
        progs, shown = docs_blocks.files(text), docs_blocks.commands(text)
        if not progs or not shown or not shown[0][0].startswith("ss "):
            failed.append(f"{page}: no program or no shown output")
            continue
        (name, program), (command, output) = progs[0], shown[0]
        with tempfile.TemporaryDirectory() as d:
            docs_blocks.write(d, name, program)
            got = docs_blocks.run(ss, command, d)
        compared += 1
        bad = docs_blocks.mismatch(page, command, got, output)
        if bad:
            failed.append(bad)
    return docs_blocks.report(f"{compared} pages compared; still planned: {', '.join(planned)}", failed)


if __name__ == "__main__":
    sys.exit(main())
