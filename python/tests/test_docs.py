"""docs/python.md's Python blocks, run in order in one namespace from the
repository's root; a `text` block right after one is its stdout."""
import contextlib
import io
import os
import re

from conftest import ROOT

BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def blocks():
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


def test_every_python_block_runs_and_prints_its_text():
    found = blocks()
    assert sum(1 for lang, _ in found if lang == "python") >= 6
    scope = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for i, (lang, code) in enumerate(found):
            if lang != "python":
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"docs/python.md block {i}", "exec"),
                     scope)
            if i + 1 < len(found) and found[i + 1][0] == "text":
                assert out.getvalue() == found[i + 1][1], code
    finally:
        os.chdir(cwd)
