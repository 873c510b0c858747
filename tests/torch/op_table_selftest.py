#!/usr/bin/python3
"""The op table must be able to fail: a few rows run against a torch
expression off by one part in 1e8 (forward only, gradient only), and an
optimizer row against torch with its lr off by as much; each must be
reported, and in the right place. A harness whose comparison, jsonl
reading or gradient plumbing silently passed everything fails here. And
the jsonl sink every row reads must give values back exactly.

    /usr/bin/python3 tests/torch/op_table_selftest.py BUILD/ss
"""

import copy
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_rows  # noqa: E402
from op_table import run_row  # noqa: E402
from ss_runner import run_ss  # noqa: E402

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


ROUND_TRIP = """dim N = 8

model In:
    x: [N] f64 = zeros()
    y: [3] f32 = zeros()
    buffer k: [3] i64 = zeros()
    buffer n: [2] i32 = zeros()
    buffer c: [2] bool = zeros()

fn main():
    let m = load("in.safetensors", In)
    jsonl("out.jsonl").write(logs(x=m.x, y=m.y, k=m.k, n=m.n, c=m.c,
                                  k0=m.k[0], i=size(m.x, N)))
"""


def jsonl_round_trip(ss):
    """The jsonl sink gives back every value exactly, in its own kind
    (Note [JSON numbers] in interp/builtins/output.cpp): f64
    bit for bit (-0.0, subnormals, the largest double), f32 exactly, ints
    as ints (past 2^53 too), bools as bools."""
    arrays = {
        "x": np.array([0.1, 1 / 3, -0.0, 5e-324, 1e-310,
                       1.7976931348623157e308, 2.0 ** 60, -7.0]),
        "y": np.array([0.1, 1 / 3, 1e-40], np.float32),
        "k": np.array([2 ** 53 + 1, -2 ** 62, 7]),
        "n": np.array([-(2 ** 31), 5], np.int32),
        "c": np.array([True, False])}
    ran = run_ss(ss, ROUND_TRIP, arrays)
    if isinstance(ran, str):
        return [ran]
    got = ran[0][0]
    problems = []
    for name, a in arrays.items():
        back = np.array(got[name], dtype=a.dtype)
        kinds = {type(v) for v in got[name]}
        want = {np.dtype(np.bool_): bool, np.dtype(np.int64): int,
                np.dtype(np.int32): int}.get(a.dtype)
        if back.tobytes() != a.tobytes() or (want and kinds != {want}):
            problems.append(f"jsonl {name}: {got[name]} for {a.tolist()}")
    if got["k0"] != 2 ** 53 + 1 or got["i"] != 8 or type(got["i"]) != int:
        problems.append(f"jsonl 0-d and host ints: {got['k0']}, {got['i']}")
    return problems


def main():
    ss = os.path.abspath(sys.argv[1])
    rows = {r.label: r for r in op_rows.ROWS}
    problems = jsonl_round_trip(ss)
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
    print(f"{len(PICKS) * 2 + 1} mutants and the jsonl round trip, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
