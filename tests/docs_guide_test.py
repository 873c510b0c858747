#!/usr/bin/python3
"""The guide's pages and the porting notes show real programs and real output.

Each page's blocks run in order in a scratch folder of its own (Note [Docs
show real output] in docs_blocks.py): a file block is written there, a
command block is run and what it prints compared exactly with the page.
Then every .ss file that no command of the page names must pass `ss check`
silently, so a fragment cannot rot unseen. A fenced block that is neither
a file nor a command fails: every block of these pages is checked.

With --update, a command whose output differs has the page's block
rewritten with what it prints now (for after a change of the messages:
read the diff before committing it).

usage: docs_guide_test.py [--update] SS_BINARY PAGE.md...
"""
import os
import shlex
import sys
import tempfile
import time

import docs_blocks


def check_page(ss, page, update=False):
    """The page's failures, and how many commands it compared."""
    failed, compared = [], 0
    text = open(page).read()
    new, at = text, 0
    name = os.path.relpath(page)
    written, named = [], set()
    with tempfile.TemporaryDirectory() as d:
        for kind, head, body in docs_blocks.blocks(text):
            if kind == "file":
                docs_blocks.write(d, head, body)
                written.append(head)
            elif kind == "command":
                named.update(shlex.split(head)[1:])
                got = docs_blocks.run(ss, head, d)
                compared += 1
                bad = docs_blocks.mismatch(name, head, got, body)
                shown = f"```\n$ {head}\n{body}```"
                at = new.index(shown, at)
                if bad and update:
                    new = new[:at] + f"```\n$ {head}\n{got}```" + \
                        new[at + len(shown):]
                elif bad:
                    failed.append(bad)
                at += 1
            else:
                failed.append(f"{name}: a block that is neither a file nor "
                              f"a command: {head!r}")
        for f in written:
            if f.endswith(".ss") and f not in named:
                got = docs_blocks.run(ss, f"ss check {f}", d)
                compared += 1
                if got:
                    failed.append(f"{name}: `ss check {f}` prints\n{got}")
    if new != text:
        with open(page, "w") as out:
            out.write(new)
    return failed, compared


def main():
    args = sys.argv[1:]
    update = args[:1] == ["--update"]
    args = args[1:] if update else args
    ss, pages = os.path.abspath(args[0]), args[1:]
    failed, compared = [], 0
    start = time.monotonic()
    for page in pages:
        f, c = check_page(ss, page, update)
        failed += f
        compared += c
    return docs_blocks.report(
        f"{len(pages)} pages, {compared} commands compared in "
        f"{time.monotonic() - start:.1f} s", failed)


if __name__ == "__main__":
    sys.exit(main())
