#!/usr/bin/python3
"""PyTorch as the oracle for every builtin of the op table (issue 10 B1).

    /usr/bin/python3 tests/torch/op_table.py BUILD/ss [--filter SUBSTR]
    /usr/bin/python3 tests/torch/op_table.py BUILD/ss --coverage

Each row (op_rows_*.py) runs as a .ss program through `ss run` (Note [How a
row runs] in op_row.py) in f64 and in f32, and is compared with torch:
forward values, the VJP at a random cotangent, and each output's dtype.
--coverage checks that every builtin `ss check --list-builtins` lists has a
torch row or a written reason (op_exempt.py) instead.

Note [Tolerances]
A float result a passes against torch's b when, elementwise,
    |a - b| <= rtol * (|b| + rms(b))
rms(b) (the root mean square of the whole tensor) lets an element that is
small next to the rest of its tensor carry an absolute error of the
tensor's own scale: sums with cancellation, the gradient of a
normalisation, a logit's softmax gradient. Large elements are held to rtol
relatively.
- f64: rtol 1e-10. Both sides compute in float64; they differ only by the
  order of summation (n * 2^-53 * sum|terms|, about 1e-15 here: every
  reduction is under 100 terms of size O(1)) and by libm's last bit in exp,
  log, erf, tanh. 1e-10 leaves five orders of margin for that and still
  catches a slip as small as an eps of 1e-5 vs 1e-6 in a normalisation
  (a relative change of about 1e-5) or a biased vs unbiased variance.
- f32: ShapeScript's f32 result is compared with torch's float64 result on
  the same f32 inputs (a stricter oracle than torch's own float32, which
  has its own rounding). rtol 1e-5: each f32 op rounds at 6e-8; a row
  chains a few ops and reductions of under 100 terms, so 1e-6 is typical
  and 1e-5 leaves margin. Rows that need more say why in their `tol`.
Integer and bool results (argmax, indices, comparisons, one-hot masks) and
every dtype compare exactly.
"""

import argparse
import concurrent.futures as cf
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_row import float_outputs, model_fields, program  # noqa: E402
from ss_runner import (as_logged, compare, dtype_of, run_ss,  # noqa: E402
                       runtime_dtypes)
import op_exempt  # noqa: E402
import op_rows  # noqa: E402

torch.set_num_threads(1)
RTOL = {"f64": 1e-10, "f32": 1e-5}
NP = {"f64": np.float64, "f32": np.float32}
# torch's result dtype as ShapeScript names it; float64 is the pass's float
# (torch computes every pass in float64).
DTYPE_NAMES = {torch.float64: None, torch.float32: "f32", torch.int64: "i64",
               torch.int32: "i32", torch.bool: "bool"}


def draw_inputs(row, dtype, rng):
    """{tensor name: numpy array} as ss gets it, in the row's order."""
    arrays = {}
    for i in row.ins:
        if i.model:
            for f, axes, _ in model_fields(i):
                pos = f in ("g", "running_var")  # scales and variances > 0
                sub = type(i)(f, axes, lo=0.5 if pos else -1.0,
                              hi=1.5 if pos else 1.0)
                arrays[f"{i.name}.{f}"] = sub.draw(rng, row.dims, NP[dtype])
        else:
            arrays[i.name] = i.draw(rng, row.dims, NP[dtype])
    return arrays


def torch_inputs(row, arrays):
    """The torch arguments, in the row's order: float64 tensors (leaves
    with requires_grad for the params), sub-models as {field: tensor}; and
    the leaves by grad name."""
    args, leaves = [], {}

    def leaf(name, a, grad):
        t = torch.from_numpy(np.array(a))
        if t.is_floating_point():
            t = t.double().requires_grad_(grad)
            if grad:
                leaves[name] = t
        return t

    for i in row.ins:
        if i.model:
            args.append({f: leaf(f"{i.name}.{f}", arrays[f"{i.name}.{f}"], p)
                       for f, _, p in model_fields(i)})
        else:
            args.append(leaf(i.name, arrays[i.name], i.grad))
    return args, leaves


def as_tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def expected_dtype(t, dtype):
    name = DTYPE_NAMES[t.dtype]
    return dtype if name is None else name


def run_row(ss, row, dtype):
    """Runs [row] in the float pass [dtype]; a list of failure messages."""
    rng = np.random.default_rng(row.seed())
    arrays = draw_inputs(row, dtype, rng)
    args, leaves = torch_inputs(row, arrays)
    outs = as_tuple(row.torch(*args))
    if len(outs) != len(row.outs):
        return [f"the row has {len(row.outs)} outs, torch gives {len(outs)}"]
    cots = {}
    grads = {}
    if row.grad and leaves:
        loss = 0
        for k in float_outputs(row, outs):
            c = rng.uniform(-1, 1, size=tuple(outs[k].shape)).astype(NP[dtype])
            cots[f"cot{k}"] = c
            loss = loss + (outs[k] * torch.from_numpy(np.array(c)).double()
                           ).sum()
        gs = torch.autograd.grad(loss, list(leaves.values()),
                                 allow_unused=True)
        for (name, t), gr in zip(leaves.items(), gs):
            grads[name] = torch.zeros_like(t) if gr is None else gr
    extras = row.torch_extra(*args) if row.torch_extra else {}
    arrays.update(cots)
    arrays["unused"] = np.array(0.0)
    src = program(row, dtype, outs)
    ran = run_ss(ss, src, arrays)
    if isinstance(ran, str):
        return [ran]
    got = ran[0][0]
    types = dict(line.split(" ", 1) for line in ran[1].splitlines()
                 if " " in line and not line.startswith(("rt:", "[", " ")))
    held = runtime_dtypes(ran[1])
    rtol = row.tol.get(dtype, RTOL[dtype])
    errs = []

    def check(what, a, t, rtol=rtol, key=None):
        if key:
            a = as_logged(a, dtype_of(types.get(key, "?")))
        e = compare(what, a, t, rtol)
        if e:
            errs.append(e)

    def check_dtype(key, want):
        found = dtype_of(types.get(key, "?"))
        if found != want:
            errs.append(f"{key}: dtype {found}, expected {want}")
        value = held.get(key, "?")
        # A host value (size(x, B): int) prints as itself, with no dtype.
        if found not in ("int", "float", "str") and value != want:
            errs.append(f"{key}: the value's dtype is {value} (typeof "
                        f"says {found}), expected {want}")

    for k, t in enumerate(outs):
        check_dtype(f"y{k}", row.out_dtype or expected_dtype(t, dtype))
        check(f"y{k}", got[f"y{k}"], t, key=f"y{k}")
    for name, t in extras.items():
        check(name, got[f"x_{name}"], t)
    # A gradient has its param's dtype, and that dtype's tolerance (an f32
    # param's gradient in the f64 pass is rounded to f32, as in torch).
    param_dtypes = {i.name: i.dtype(dtype) for i in row.ins}
    for name, t in grads.items():
        key = "g_" + name.replace(".", "__")
        pdt = param_dtypes.get(name, dtype)
        check_dtype(key, pdt)
        check(f"grad {name}", got[key], t,
              rtol if pdt == dtype else RTOL[pdt], key=key)
    return errs


def list_builtins(ss):
    p = subprocess.run([ss, "check", "--list-builtins"], capture_output=True,
                       text=True, check=True)
    return [line.split("\t") for line in p.stdout.splitlines() if line]


def coverage(ss):
    """Every builtin has a torch row or a reason (op_exempt.REASONS)."""
    builtins = {b[0]: b for b in list_builtins(ss)}
    covered = {op for r in op_rows.ROWS if not r.known_bug for op in r.ops}
    buggy = {op for r in op_rows.ROWS if r.known_bug for op in r.ops}
    errs = op_exempt.check(builtins, covered, buggy)
    kinds = {}
    for name in builtins:
        k = ("torch row" if name in covered else
             op_exempt.REASONS[name].kind if name in op_exempt.REASONS
             else "none")
        kinds[k] = kinds.get(k, 0) + 1
    print(f"{len(builtins)} builtins: " +
          ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    for e in errs:
        print("coverage:", e)
    return 1 if errs else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ss")
    ap.add_argument("--coverage", action="store_true")
    ap.add_argument("--filter", default="")
    ap.add_argument("--devices", default="",
                    help="run every row on these devices (cuda[0]: "
                    "scripts/gpu_check.sh)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    if args.devices:
        os.environ["SS_OP_TABLE_DEVICES"] = args.devices  # ss_runner.run_ss
    if args.coverage:
        return coverage(ss)
    rows = [r for r in op_rows.ROWS if args.filter in r.label
            or any(args.filter == op for op in r.ops)]
    # Known bugs run too, apart: they do not fail the table, but one that
    # passes says so, so that its mark is removed and it counts again.
    jobs = [(r, dt) for r in rows for dt in r.dtypes]
    failed, known = 0, 0
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(r.run if hasattr(r, "run") else run_row, *(
            (ss, dt) if hasattr(r, "run") else (ss, r, dt))): (r, dt)
            for r, dt in jobs}
        for fut in futures:
            r, dt = futures[fut]
            try:
                errs = fut.result()
            except Exception as e:  # a row's own mistake: report, go on
                errs = [f"{type(e).__name__}: {e}"]
            if r.known_bug:
                known += 1
                print(f"known_bug {r.label} [{dt}]: " + (
                    f"fails as expected ({r.known_bug})" if errs else
                    "PASSES NOW: remove its known_bug mark"))
            elif errs:
                failed += 1
                print(f"FAIL {r.label} [{dt}]")
                for e in errs:
                    print("    " + e.replace("\n", "\n    "))
    print(f"{len(jobs) - known - failed} passed, {failed} failed, {known} "
          f"known_bug ({len(rows)} rows, {len(jobs)} runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
