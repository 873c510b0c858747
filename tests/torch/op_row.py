"""One row of the torch op table: a ShapeScript call, its inputs, and the
torch expression that must agree with it (forward and VJP).

Note [How a row runs]
A row becomes one .ss program run by `ss run`, the path users run:
- every input is a field of `model In`, loaded from in.safetensors (exact
  bytes, no text rounding); float inputs are params (they get gradients),
  integer and bool inputs and `grad=False` floats are buffers;
- main evaluates the call, then `value_and_grad` of
  `sum(y0 * cot0) + sum(y1 * cot1) + ...` over the float outputs, with fixed
  random cotangents (buffers too), so `g.<input>` is the VJP of the op at
  that cotangent;
- everything goes out through a jsonl sink (format_number writes the
  shortest text that round-trips a double, so f64 values come back exact),
  and `typeof` of each output and gradient goes to stdout, so dtypes are
  compared too (a gradient has its param's dtype, as in torch); so does
  the value itself, printed, whose header is the runtime tensor's dtype:
  a kernel that returns another dtype than its rule says fails the row
  (maximum of two bools once gave i64 under a `bool` typeof).
The driver (op_table.py) computes the same with torch in float64 and
compares.
"""

import re
import zlib

import numpy as np

# Sizes of the dims a row's axes may name: all different, so that a swapped
# or transposed axis changes the shape and cannot pass.
DIMS = {"A": 3, "B": 4, "C": 5, "D": 6, "E": 2}

_DTYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64,
           "i32": np.int32, "bool": np.bool_}
FLOATS = ("f", "f32", "f64")


class In:
    """An input of a row. kind: "f" (the pass's float dtype), "f32" or
    "f64" (that one in either pass: mixed-dtype rows), "i64", "i32" or
    "bool". Floats are drawn uniformly from [lo, hi), ints from
    [lo, hi) too. values(rng, shape) overrides the draw (distinct values,
    NaNs, ties)."""

    def __init__(self, name, axes, kind="f", lo=-2.0, hi=2.0, grad=True,
                 values=None, model=None):
        self.name, self.axes, self.kind = name, axes, kind
        self.lo, self.hi, self.values = lo, hi, values
        self.grad = grad and kind in FLOATS
        # A stdlib sub-model type (`LayerNorm[B]`): the input is `m.<name>`
        # and the row's tensors are its fields, named "<name>.<field>".
        self.model = model

    def draw(self, rng, dims, float_dtype):
        shape = shape_of(self.axes, dims)
        if self.values is not None:
            a = np.asarray(self.values(rng, shape))
        elif self.kind in FLOATS:
            a = rng.uniform(self.lo, self.hi, size=shape)
        elif self.kind == "bool":
            a = rng.integers(0, 2, size=shape).astype(np.bool_)
        else:
            a = rng.integers(int(self.lo), int(self.hi), size=shape)
        if self.kind == "f":
            return a.astype(float_dtype)
        return a.astype(_DTYPES[self.kind])

    def dtype(self, pass_dtype):
        """The input's ShapeScript dtype in the float pass [pass_dtype]."""
        return pass_dtype if self.kind == "f" else self.kind


class Row:
    """ops: the builtins the row covers (the coverage test reads them).
    call: the ShapeScript expression over the inputs' names.
    outs: each output's axes (a tuple call has several); "" is 0-d.
    torch: fn(*inputs), the inputs in the order of ins, in float64 (a
    sub-model as {field: tensor}) -> a tensor or a tuple of them.
    grad: whether the float outputs get cotangents (the VJP is compared).
    extra: {name: ShapeScript expression} read after the call (a model's
    buffers); torch_extra(*inputs) gives their torch values.
    dtypes: the float passes to run. tol: {"f64": r, "f32": r} overrides.
    known_bug: why the row fails (a bug left for its owner): the driver
    runs it apart, and reports it, without failing the table."""

    def __init__(self, ops, call, ins, outs, torch, label=None, grad=True,
                 dims=None, extra=None, torch_extra=None,
                 dtypes=("f64", "f32"), tol=None, known_bug=None,
                 prelude="", out_dtype=None, vjp="value_and_grad"):
        self.ops = (ops,) if isinstance(ops, str) else tuple(ops)
        # How the VJP is taken: value_and_grad(loss, ..) (every row, so a
        # torch row of value_and_grad too), grad(loss, ..), or
        # value_and_grad(remat(loss), ..).
        self.vjp = vjp
        if grad and any(i.grad or i.model for i in ins):
            self.ops += ("value_and_grad",) if vjp != "grad" else ()
        self.call, self.ins = call, ins
        self.outs = [outs] if isinstance(outs, str) else list(outs)
        self.torch, self.grad = torch, grad
        self.label = label or call
        self.dims = dict(DIMS, **(dims or {}))
        self.extra = extra or {}
        self.torch_extra = torch_extra
        self.dtypes, self.tol = dtypes, tol or {}
        self.known_bug = known_bug
        self.prelude = prelude  # extra top-level declarations
        # The outputs' dtype where it does not follow the pass: "int" (a host
        # int), "f64" (to(x, f64) in the f32 pass).
        self.out_dtype = out_dtype

    def seed(self):
        return zlib.crc32(self.label.encode())


def shape_of(axes, dims):
    """"A B" -> (3, 4); literal sizes pass through; groups "(A B)" are one
    axis of the product."""
    out = []
    for tok in group_tokens(axes):
        if tok.startswith("("):
            out.append(int(np.prod(shape_of(tok[1:-1], dims))))
        else:
            out.append(int(tok) if tok.isdigit() else dims[tok])
    return tuple(out)


def group_tokens(axes):
    toks, depth, cur = [], 0, ""
    for ch in axes:
        if ch == " " and depth == 0:
            if cur:
                toks.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur:
        toks.append(cur)
    return toks


def used_dims(row):
    names = set()
    for text in [i.axes for i in row.ins] + row.outs + [row.call]:
        names.update(t for t in re.findall(r"\w+", text) if t in row.dims)
    for i in row.ins:
        if i.model:
            names.update(t for t in re.findall(r"\w+", i.model)
                         if t in row.dims)
    return sorted(names)


def float_outputs(row, torch_outs):
    return [k for k, t in enumerate(torch_outs) if t.is_floating_point()]


def program(row, dtype, torch_outs):
    """The .ss program of [row] in the float pass [dtype] ("f64", "f32"),
    given torch's outputs (which of them are floats)."""
    lines = [f"dim {d} = {row.dims[d]}" for d in used_dims(row)]
    lines += ["", row.prelude]
    lines.append("model In:")
    params = [i for i in row.ins if i.grad or i.model]
    for i in row.ins:
        if i.model:
            # The stdlib's models are generic over their dtype.
            lines.append(f"    {i.name}: {i.model} {dtype}")
            continue
        t = i.dtype(dtype)
        buf = "" if i.grad else "buffer "
        lines.append(f"    {buf}{i.name}: [{i.axes}] {t} = zeros()")
    cots = float_outputs(row, torch_outs) if row.grad and params else []
    for k in cots:
        lines.append(f"    buffer cot{k}: [{row.outs[k]}] {dtype} = zeros()")
    # A model needs a field even when a row has no inputs (tensor([..])).
    lines.append("    buffer unused: [] f64 = zeros()")
    names = [f"y{k}" for k in range(len(row.outs))]
    binds = [f"    let {i.name} = m.{i.name}" for i in row.ins]
    call = f"    let {', '.join(names)} = {row.call}"
    if cots:
        loss = " + ".join(f"sum(y{k} * m.cot{k})" for k in cots)
        # f64 whatever the pass: a row's output may be f64 in the f32 pass
        # (to(x, f64)); the cast's VJP at the loss is exact.
        lines += ["", "fn loss(mut m: In) -> f64:", *binds, call,
                  f"    return to({loss}, f64)"]
    lines += ["", "fn main():", '    let m = load("in.safetensors", In)']
    if cots:
        lines.append("    let mg = copy(m)")
    lines += [*binds, call]
    fields = [f"y{k}=y{k}" for k in range(len(row.outs))]
    fields += [f"x_{n}={e}" for n, e in row.extra.items()]
    if cots:
        lines.append({
            "value_and_grad": "    let loss_value, grads = "
                              "value_and_grad(loss, mg)",
            "grad": "    let grads = grad(loss, mg)",
            "remat": "    let loss_value, grads = "
                     "value_and_grad(remat(loss), mg)"}[row.vjp])
        for name in grad_names(row):
            fields.append(f"g_{name.replace('.', '__')}=grads.{name}")
    lines.append(f'    jsonl("out.jsonl").write(logs({", ".join(fields)}))')
    # One line per value: its jsonl name, then its type; then the value
    # printed under "rt:<name>", whose header is the runtime tensor's dtype
    # (the checker's type and the value's dtype are compared separately:
    # Note [How a row runs]).
    values = [(f"y{k}", f"y{k}") for k in range(len(row.outs))]
    if cots:
        values += [("g_" + name.replace(".", "__"), f"grads.{name}")
                   for name in grad_names(row)]
    for key, expr in values:
        lines.append(f'    print("{key}", typeof({expr}))')
    for key, expr in values:
        lines.append(f'    print("rt:{key}", {expr})')
    return "\n".join(lines) + "\n"


# The stdlib models a row may take as an input: their dim parameters and
# fields (name, axes, param or buffer, init), as in interp/check/stdlib.cpp.
STDLIB = {
    "LayerNorm": (["D"], [("g", "D", True, "ones()"),
                          ("b", "D", True, "zeros()")]),
    "Linear": (["I", "O"], [("w", "I O", True, "zeros()"),
                            ("b", "O", True, "zeros()")]),
    "BatchNorm": (["C"], [("g", "C", True, "ones()"),
                          ("b", "C", True, "zeros()"),
                          ("running_mean", "C", False, "zeros()"),
                          ("running_var", "C", False, "ones()")]),
}


def model_fields(i):
    """The fields of a stdlib sub-model input: (name, axes, is a param)."""
    kind, args = i.model.split("[")
    params, fields = STDLIB[kind]
    sub = dict(zip(params, args.rstrip("]").split()))
    return [(f, " ".join(sub[a] for a in axes.split()), p)
            for f, axes, p, _ in fields]


def grad_names(row):
    names = []
    for i in row.ins:
        if i.model:
            names += [f"{i.name}.{f}" for f, _, p in model_fields(i) if p]
        elif i.grad:
            names.append(i.name)
    return names
