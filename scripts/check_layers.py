#!/usr/bin/python3
"""The house rules a reviewer would otherwise check by hand (issue 11 item 8).

1. No source file over 800 lines.
2. No include that goes up the layers: each folder below may include its
   own files and those of the folders it lists, nothing else of the
   project. The table is the architecture (docs/architecture.md); a new
   folder gets a row here.

Run from anywhere: scripts/check_layers.py [ROOT]. Exit 1 with one line per
breach; ctest runs it (tests/CMakeLists.txt).
"""
import os
import re
import sys

MAX_LINES = 800

# folder -> the folders it may include (besides itself). Longest prefix wins.
BASE = ["diag"]
OPS = BASE + ["ops"]
FRONT = OPS + ["interp/lex", "interp/parse", "interp/check"]
LAYERS = {
    "diag": [],
    "ops/core": BASE,
    "ops": OPS,
    "ref": OPS,
    "dist": OPS,
    "interp/lex": OPS,
    "interp/parse": OPS + ["interp/lex"],
    "interp/check": FRONT,
    # The checker's several-devices pass: below the evaluator.
    "interp/devices/plan": FRONT,
    "interp/eval": FRONT,
    "interp/data": FRONT + ["interp/eval"],
    "interp/builtins": FRONT + ["interp/eval", "interp/data"],
    "interp/devices": FRONT + ["interp/eval", "interp/data", "interp/builtins",
                               "interp/devices", "dist"],
    "interp/cli": FRONT + ["interp/eval", "interp/data", "interp/builtins",
                           "interp/devices", "interp/cli", "dist"],
}
# Tests, benchmarks and tools may include anything.
FREE = ("tests/", "bench/", "/tests/", "scripts/")
SOURCE = (".cpp", ".h", ".def", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    best = None
    for folder in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    breaches = []
    for top in ["diag", "ops", "ref", "dist", "interp", "tests", "bench"]:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith(SOURCE):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                with open(full, encoding="utf-8", errors="replace") as fh:
                    lines = fh.readlines()
                if len(lines) > MAX_LINES:
                    breaches.append(f"{rel}: {len(lines)} lines (at most "
                                    f"{MAX_LINES}: split it by job)")
                if rel.startswith(FREE) or any(p in rel for p in FREE):
                    continue
                mine = layer_of(rel)
                if mine is None:
                    breaches.append(f"{rel}: in no layer of "
                                    "scripts/check_layers.py (add its folder)")
                    continue
                allowed = [mine] + LAYERS[mine]
                for n, line in enumerate(lines, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    target = layer_of(m.group(1))
                    if target is None:
                        continue  # not a project header
                    if not any(target == a or target.startswith(a + "/")
                               for a in allowed):
                        breaches.append(
                            f"{rel}:{n}: includes {m.group(1)}, above its "
                            f"layer ({mine} may include {', '.join(allowed)})")
    for b in breaches:
        print(b)
    if breaches:
        print(f"{len(breaches)} breaches of the house rules")
        return 1
    print("layers and file sizes: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
