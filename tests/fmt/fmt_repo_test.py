#!/usr/bin/python3
"""`ss fmt` over every program of the repository (issue 30).

The programs: every .ss file under the source tree (examples, conformance,
tests, python/tests, bench; the fuzz corpus's too) and every fenced block of
the docs' pages (README.md, docs/**.md) that parses. For each:

(a) the layout is a fixed point: formatting the formatted text changes
    nothing, at the default width and at 40 and 200 columns;
(b) it is the same program: the text laid out at 40 columns (lines broken,
    comments moved to their brackets' columns) and at 200 (lines joined)
    checks as the original does: the same diagnostics, codes, messages and
    notes (their locations aside, which the layout moves), and, when it
    checks, the same fns, signatures, locals and types (`ss check --types`);
(c) it runs to the same output: every conformance case that expects `ok`
    and every example, laid out at 40 columns, passes `ss conformance` on
    `cpu`, which compares what main prints with the `# output:` lines
    written for the original (and runs it: the layout must not break it);
    and the guide's commands print what its pages show with the pages'
    files laid out at 40 columns (those whose output names no place in a
    file);
(d) the repository's own .ss files are kept formatted: `ss fmt --check`
    passes on each (the fuzz corpus aside: its files are inputs, and the
    cases whose point is a syntax error, which do not parse).

usage: fmt_repo_test.py SS_BINARY SOURCE_ROOT
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import docs_blocks  # noqa: E402

CORPUS = os.path.join("tests", "fuzz", "corpus")
WIDTHS = (40, 200)


def fmt(ss, text, width=None):
    args = [ss, "fmt", "-"] + (["--width", str(width)] if width else [])
    r = subprocess.run(args, input=text, capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout, r.stderr


def located(text):
    """[text] without its locations (path:line:col, path:line) and its
    whitespace: a message that quotes source quotes it as it is laid out
    (`x@w` in a file not yet formatted, `x @ w` in its layout)."""
    return re.sub(r"\s+", "", re.sub(r"[\w./<>-]*\.ss:\d+(:\d+)?", "<loc>",
                                     text))


def unlocated(value):
    """[value] (parsed JSON diagnostics) without the places they point at."""
    if isinstance(value, dict):
        return {k: unlocated(v) for k, v in value.items()
                if k not in ("line", "column", "end", "file", "span")}
    if isinstance(value, list):
        return [unlocated(v) for v in value]
    return located(value) if isinstance(value, str) else value


def checked(ss, folder, name):
    """What `ss check` says of [folder]/[name]: its exit code, its
    diagnostics without their locations, and its types."""
    r = subprocess.run([ss, "check", name, "--json"], cwd=folder,
                       capture_output=True, text=True, timeout=120)
    try:
        diags = json.loads(r.stdout) if r.stdout.strip() else []
    except json.JSONDecodeError:
        diags = r.stdout
    if isinstance(diags, dict):
        diags = diags.get("diagnostics", diags)
    diags = unlocated(diags)
    types = ""
    if r.returncode == 0:
        t = subprocess.run([ss, "check", name, "--types"], cwd=folder,
                           capture_output=True, text=True, timeout=120)
        types = located(t.stdout + t.stderr)
    return r.returncode, json.dumps(diags, sort_keys=True), \
        located(r.stderr), types


def programs(root):
    """(label, folder files {name: text}, name, text, kept_formatted) for
    every .ss file and every docs block that is a file."""
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if not x.startswith(("build", ".")))
        if rel.startswith(("build", ".")):
            continue
        for f in sorted(files):
            if f.endswith(".ss"):
                path = os.path.join(d, f)
                text = open(path, encoding="utf-8", errors="replace").read()
                siblings = {g: os.path.join(d, g) for g in files
                            if g.endswith(".ss")}
                out.append((os.path.relpath(path, root), siblings, f, text,
                            not rel.startswith(CORPUS)))
    pages = [os.path.join(root, "README.md")]
    for d, dirs, files in os.walk(os.path.join(root, "docs")):
        pages += [os.path.join(d, f) for f in sorted(files)
                  if f.endswith(".md")]
    for page in sorted(pages):
        text = open(page, encoding="utf-8").read()
        written = {}
        for i, (kind, head, body) in enumerate(docs_blocks.blocks(text)):
            if kind == "command":
                continue
            is_file = kind == "file"
            if is_file and not head.endswith(".ss"):
                continue
            name = head if is_file else f"block{i}.ss"
            if is_file:
                written[name] = body  # a later block may import it
            out.append((f"{os.path.relpath(page, root)} block {i + 1}",
                        {**written, name: body}, name, body, False))
    return out


def syntax_error(ss, text):
    """Whether `ss fmt` refused [text] for a syntax error (E01xx) and for
    nothing else."""
    rc, _, err = fmt(ss, text)
    return rc == 1 and re.search(r"error\[E01\d\d\]", err) is not None


def same_program(ss, label, siblings, name, text, layouts, failures):
    """Checks each of [layouts] ({width: [name]'s text laid out at that
    width}) against [text] in one folder with [siblings] (imports resolve as
    in the original): the original is checked once, then each layout in its
    place. A sibling that is a file is linked, not copied: a conformance
    folder has a hundred of them, and copying each for every program was
    most of this test's time."""
    with tempfile.TemporaryDirectory() as d:
        for sib, src in siblings.items():
            if sib == name:
                continue
            if os.path.exists(str(src)):
                os.symlink(os.path.abspath(src), os.path.join(d, sib))
            else:
                with open(os.path.join(d, sib), "w") as f:
                    f.write(src)

        def check(version):
            with open(os.path.join(d, name), "w") as f:
                f.write(version)
            return checked(ss, d, name)

        original = check(text)
        for width, laid_out in layouts.items():
            got = check(laid_out)
            if got != original:
                failures.append(f"{label}: laid out again at width {width} "
                                f"it checks differently:\n"
                                f"  original:  {original}\n"
                                f"  laid out:  {got}")


def run_docs_laid_out(ss, root, failures):
    """(c) for the docs: each guide page (and the porting notes) replayed
    with its .ss file blocks laid out at 40 columns: every command whose
    shown output names no place in a file (`train.ss:12:5`, which the
    layout moves) and does not print a file back (`cat`) must print what
    the page shows, as docs_guide_test.py runs the blocks as written."""
    pages = sorted(os.path.join(root, "docs", "guide", f)
                   for f in os.listdir(os.path.join(root, "docs", "guide"))
                   if f.endswith(".md"))
    pages.append(os.path.join(root, "docs", "porting.md"))
    compared = 0
    for page in pages:
        text = open(page, encoding="utf-8").read()
        with tempfile.TemporaryDirectory() as d:
            for kind, head, body in docs_blocks.blocks(text):
                if kind == "file":
                    if head.endswith(".ss"):
                        rc, laid, _ = fmt(ss, body, 40)
                        body = laid if rc == 0 else body
                    docs_blocks.write(d, head, body)
                elif kind == "command":
                    cmd, shown = head, body
                    if cmd.startswith("cat ") or re.search(r"\.ss:\d+", shown):
                        continue
                    got = docs_blocks.run(ss, cmd, d)
                    compared += 1
                    if got != shown:
                        failures.append(
                            f"{os.path.relpath(page, root)}: `{cmd}` with its "
                            f"files laid out at 40 columns prints\n{got}\n"
                            f"where the page shows\n{shown}")
    return compared


def run_laid_out(ss, root, failures):
    """(c): the ok cases and examples, at 40 columns, through the suite."""
    with tempfile.TemporaryDirectory() as d:
        count = 0
        for sub in ("conformance", "examples"):
            for folder, _, files in os.walk(os.path.join(root, sub)):
                for f in files:
                    if not f.endswith(".ss"):
                        continue
                    text = open(os.path.join(folder, f)).read()
                    ok = "# expect: ok" in text or (
                        sub == "examples" and "# expect:" not in text)
                    if not ok:
                        continue
                    rc, out, err = fmt(ss, text, 40)
                    if rc != 0:
                        failures.append(f"{sub}/{f}: not formatted: {err}")
                        continue
                    dest = os.path.join(d, os.path.relpath(folder, root))
                    os.makedirs(dest, exist_ok=True)
                    with open(os.path.join(dest, f), "w") as g:
                        g.write(out)
                    count += 1
                # Files an ok case imports come along as they are.
                for f in files:
                    dest = os.path.join(d, os.path.relpath(folder, root), f)
                    if f.endswith(".ss") and not os.path.exists(dest) and \
                            os.path.exists(os.path.dirname(dest)) and \
                            "# expect:" not in open(
                                os.path.join(folder, f)).read():
                        shutil.copy(os.path.join(folder, f), dest)
        r = subprocess.run([ss, "conformance", d, "--devices", "cpu",
                            "--missing-expect-ok"], capture_output=True,
                           text=True, timeout=1200)
        tail = r.stdout.strip().splitlines()[-1:] or [""]
        if r.returncode != 0:
            failures.append("(c) the ok cases laid out at 40 columns fail "
                            "`ss conformance`:\n" + "\n".join(
                                line for line in r.stdout.splitlines()
                                if not line.startswith("ok")))
        return count, tail[0]


def main():
    ss, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    start = time.monotonic()
    failures = []
    progs = programs(root)
    formatted = skipped = 0
    for label, siblings, name, text, kept in progs:
        rc, out, err = fmt(ss, text)
        if rc != 0:
            if syntax_error(ss, text):
                skipped += 1  # a fragment, or a case about a syntax error
            else:
                failures.append(f"{label}: ss fmt fails: {err}")
            continue
        formatted += 1
        if fmt(ss, out)[1] != out:
            failures.append(f"{label}: formatting twice changes it")
        if kept and out != text:
            failures.append(f"{label}: not formatted (run `build/ss fmt "
                            f"{label}`)")
        layouts = {}
        for width in WIDTHS:
            rc, laid, err = fmt(ss, text, width)
            if rc != 0 or fmt(ss, laid, width)[1] != laid:
                failures.append(f"{label}: at width {width} the layout is "
                                f"not a fixed point: {err}")
                continue
            layouts[width] = laid
        if layouts:
            same_program(ss, label, siblings, name, text, layouts, failures)
    ran, summary = run_laid_out(ss, root, failures)
    docs = run_docs_laid_out(ss, root, failures)
    print(f"{formatted} programs formatted ({skipped} that do not parse "
          f"left alone), each at 3 widths and checked against its original; "
          f"{ran} ok cases and examples run at 40 columns: {summary}; "
          f"{docs} commands of the guide run with its files at 40 columns; "
          f"{time.monotonic() - start:.0f} s")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
