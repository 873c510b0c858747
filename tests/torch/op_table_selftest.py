#!/usr/bin/python3
"""The op table must be able to fail: a few rows run against a torch
expression off by one part in 1e8 (forward only, gradient only), and an
optimizer row against torch with its lr off by as much; each must be
reported, and in the right place. A harness whose comparison, jsonl
reading or gradient plumbing silently passed everything fails here.

    /usr/bin/python3 tests/torch/op_table_selftest.py BUILD/ss
"""

import copy
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_rows  # noqa: E402
from op_table import run_row  # noqa: E402

# 1e-8 relative: 100x the f64 tolerance, below the f32 one (so only the
# f64 pass must catch it).
SLIP = 1e-8
PICKS = ["softmax(x, over=B)", "layer_norm(x, over=B, affine=ln)",
         "cross_entropy(z, y)", "conv2d(x, k, stride=2, padding=1)",
         "x @ y", "batch_norm train [A B]"]


def forward_off(fn):
    return lambda *a: fn(*a) * (1 + SLIP)


def gradient_off(fn):
    """The same values, gradients scaled by 1 + SLIP."""
    def off(*a):
        y = fn(*a)
        return y + (y * SLIP - (y * SLIP).detach())
    return off


def mutant(row, wrap):
    m = copy.copy(row)
    m.torch = wrap(row.torch)
    return m


def main():
    ss = os.path.abspath(sys.argv[1])
    rows = {r.label: r for r in op_rows.ROWS}
    problems = []
    for label in PICKS:
        row = rows[label]
        for kind, wrap, where in [("forward", forward_off, "y0"),
                                  ("gradient", gradient_off, "grad ")]:
            errs = run_row(ss, mutant(row, wrap), "f64")
            if not any(e.startswith(where) for e in errs):
                problems.append(f"{label}: a {kind} off by {SLIP:g} passed "
                                f"(reported: {errs})")
        if run_row(ss, row, "f64"):
            problems.append(f"{label}: fails unmutated")
    opt = copy.copy(rows["adamw defaults"])
    opt.torch_opt = lambda ps: torch.optim.AdamW(ps, lr=0.01 * (1 + SLIP))
    errs = opt.run(ss, "f64")
    if not any(" w:" in e for e in errs):
        problems.append(f"adamw with lr off by {SLIP:g} passed ({errs})")
    for p in problems:
        print("selftest:", p)
    print(f"{len(PICKS) * 2 + 1} mutants, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
