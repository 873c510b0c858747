#!/usr/bin/python3
"""docs/reference/builtins.md is the op table's, and the table is complete.

Fails when the checked-in page differs from what `ss check
--builtins-reference` generates now (Note [The builtins' reference] in
interp/cli/builtin_reference.cpp), or when a builtin that `ss check
--list-builtins` lists has no row on the page, or a row with an empty
summary, device rule or torch entry.

usage: docs_builtins_test.py SS_BINARY docs/reference/builtins.md
"""
import difflib
import re
import subprocess
import sys

import docs_blocks

CELL = re.compile(r"(?<!\\)\|")
ROW = re.compile(r"^\| `(\w+)\(")


def rows(page):
    """{builtin: [signature, what, devices, torch]} of the page's tables."""
    out = {}
    for line in page.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        cells = [c.strip() for c in CELL.split(line)[1:-1]]
        out.setdefault(m.group(1), []).append(cells)
    return out


def main():
    ss, path = sys.argv[1], sys.argv[2]
    failed = []
    made = subprocess.run([ss, "check", "--builtins-reference"],
                          capture_output=True, text=True, timeout=60)
    listed = subprocess.run([ss, "check", "--list-builtins"],
                            capture_output=True, text=True, timeout=60)
    names = [l.split("\t")[0] for l in listed.stdout.splitlines() if l]
    page = open(path).read()
    if made.returncode != 0 or not names:
        failed.append(f"ss check --builtins-reference exits "
                      f"{made.returncode}: {made.stderr}")
    elif made.stdout != page:
        diff = difflib.unified_diff(page.splitlines(), made.stdout.splitlines(),
                                    path, "generated", lineterm="", n=1)
        failed.append(f"{path} is not the op table's; regenerate it with\n"
                      f"  build/ss check --builtins-reference > {path}\n" +
                      "\n".join(list(diff)[:40]))
    table = rows(made.stdout)
    for name in names:
        entries = table.get(name, [])
        if len(entries) != 1:
            failed.append(f"`{name}` has {len(entries)} rows, not 1")
            continue
        cells = entries[0]
        if len(cells) != 4:
            failed.append(f"`{name}`'s row has {len(cells)} cells: {cells}")
            continue
        for label, cell in zip(["summary", "device rule", "torch entry"],
                               cells[1:]):
            if not cell:
                failed.append(f"`{name}` has no {label} (its OpDef in "
                              f"ops/defs/)")
    extra = sorted(set(table) - set(names))
    if extra:
        failed.append(f"rows for names that are not builtins: {extra}")
    return docs_blocks.report(f"{len(names)} builtins, {len(table)} rows", failed)


if __name__ == "__main__":
    sys.exit(main())
