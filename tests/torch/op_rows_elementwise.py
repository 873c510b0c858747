"""Torch rows of the elementwise, comparison and logic builtins."""

import numpy as np
import torch
import torch.nn.functional as F

from op_row import In, Row


def away_from(points, margin=0.1):
    """Uniform values in [-2, 2) at least [margin] from each kink."""
    def draw(rng, shape):
        v = rng.uniform(-2, 2, size=shape)
        for p in points:
            near = np.abs(v - p) < margin
            v = np.where(near, v + np.sign(v - p + 1e-9) * 2 * margin, v)
        return v
    return draw


def ints_as_floats(lo, hi):
    """Integer values stored as floats: comparisons and maximum meet ties."""
    return lambda rng, shape: rng.integers(lo, hi, size=shape).astype(float)


def with_nonfinite(rng, shape):
    v = rng.uniform(-2, 2, size=shape)
    flat = v.reshape(-1)
    flat[::3] = np.nan
    flat[1::5] = np.inf
    flat[2::7] = -np.inf
    return v


X = In("x", "A B")
POS = In("x", "A B", lo=0.1, hi=3.0)
KINKED = In("x", "A B", values=away_from([0.0]))

UNARY = [
    ("abs", "abs(x)", KINKED, torch.abs),
    ("sign", "sign(x)", KINKED, torch.sign),
    ("exp", "exp(x)", X, torch.exp),
    ("expm1", "expm1(x)", X, torch.expm1),
    ("log", "log(x)", POS, torch.log),
    ("log1p", "log1p(x)", In("x", "A B", lo=-0.9, hi=3.0), torch.log1p),
    ("sqrt", "sqrt(x)", POS, torch.sqrt),
    ("rsqrt", "rsqrt(x)", POS, torch.rsqrt),
    ("sin", "sin(x)", X, torch.sin),
    ("cos", "cos(x)", X, torch.cos),
    ("tanh", "tanh(x)", X, torch.tanh),
    ("sigmoid", "sigmoid(x)", X, torch.sigmoid),
    ("relu", "relu(x)", KINKED, torch.relu),
    ("silu", "silu(x)", X, F.silu),
    ("softplus", "softplus(x)", In("x", "A B", lo=-6, hi=6), F.softplus),
    ("neg", "-x", X, torch.neg),
    ("gelu", "gelu(x)", X, F.gelu),
]

ROWS = [Row(op, call, [inp], "A B", fn) for op, call, inp, fn in UNARY]
ROWS += [
    Row("gelu", 'gelu(x, approximate="tanh")', [X], "A B",
        lambda x: F.gelu(x, approximate="tanh")),
    Row("isnan", "isnan(x)", [In("x", "A B", values=with_nonfinite)], "A B",
        torch.isnan, grad=False),
    Row("isfinite", "isfinite(x)", [In("x", "A B", values=with_nonfinite)],
        "A B", torch.isfinite, grad=False),
    # NaN stays NaN (the runtime fuzzer's oracle: ref/ gave 0).
    Row("relu", "relu(x)", [In("x", "A B", values=with_nonfinite)], "A B",
        torch.relu, grad=False, label="relu of NaN and infinities"),
]

XY = [In("x", "A B"), In("y", "B")]  # broadcasting [A B] with [B]
ROWS += [
    Row("add", "x + y", XY, "A B", torch.add),
    Row("sub", "x - y", XY, "A B", torch.sub),
    Row("mul", "x * y", XY, "A B", torch.mul),
    Row("div", "x / y", [In("x", "A B"), In("y", "B", lo=0.5, hi=2.0)],
        "A B", torch.div),
    Row("pow", "x ** y", [In("x", "A B", lo=0.2, hi=2.0), In("y", "B")],
        "A B", torch.pow),
    Row("pow", "x ** 3.0", [X], "A B", lambda x: x ** 3, label="x ** 3.0"),
    Row("maximum", "maximum(x, y)", XY, "A B", torch.maximum),
    Row("minimum", "minimum(x, y)", XY, "A B", torch.minimum),
    Row("max", "max(x, y)", XY, "A B", torch.maximum),
    Row("min", "min(x, y)", XY, "A B", torch.minimum),
    Row("clip", "clip(x, -0.5, 0.7)", [In("x", "A B",
        values=away_from([-0.5, 0.7], 0.05))], "A B",
        lambda x: torch.clamp(x, -0.5, 0.7)),
    # Floored division and remainder of floats, as Python's // and %.
    Row("floordiv", "x // y", [In("x", "A B", lo=-5, hi=5),
        In("y", "B", values=lambda r, s: r.choice([-1.5, 0.7, 2.0], s))],
        "A B", lambda x, y: torch.div(x, y, rounding_mode="floor"),
        grad=False),
    Row("mod", "x % y", [In("x", "A B", lo=-5, hi=5),
        In("y", "B", values=lambda r, s: r.choice([-1.5, 0.7, 2.0], s))],
        "A B", torch.remainder),
    # Infinite dividends: -inf // 1 is NaN, as Python's (fmod(-inf, 1) is
    # NaN), and x // 0 is x / 0 (the runtime fuzzer's oracle: ref/ gave
    # floor(a / b)).
    Row("floordiv", "x // y", [In("x", "A B", values=with_nonfinite),
        In("y", "B", values=lambda r, s: r.choice([-1.5, 0.0, 2.0], s))],
        "A B", lambda x, y: torch.div(x, y, rounding_mode="floor"),
        grad=False, label="x // y of infinities"),
    Row("floordiv", "x // y", [In("x", "A B", "i64", -9, 9),
        In("y", "B", "i64", values=lambda r, s: r.choice([-3, 2, 4], s))],
        "A B", lambda x, y: torch.div(x, y, rounding_mode="floor"),
        label="x // y i64"),
    Row("mod", "x % y", [In("x", "A B", "i64", -9, 9),
        In("y", "B", "i64", values=lambda r, s: r.choice([-3, 2, 4], s))],
        "A B", torch.remainder, label="x % y i64"),
    # Dtype promotion (language.md: torch.result_type).
    Row("add", "x + y", [In("x", "A B", "i32", -5, 5),
        In("y", "B", "i64", -5, 5)], "A B", torch.add, label="i32 + i64"),
    Row("div", "x / y", [In("x", "A B", "i64", -5, 5),
        In("y", "B", "i64", 1, 4)], "A B", torch.div, label="i64 / i64",
        dtypes=("f32",)),
    Row("mul", "x * 0.5", [In("x", "A B", "i64", -5, 5)], "A B",
        lambda x: (x * 0.5).float(), label="i64 * host float",
        dtypes=("f32",)),
]

TIES = [In("x", "A B", values=ints_as_floats(-2, 3)),
        In("y", "B", values=ints_as_floats(-2, 3))]
for op, sym, fn in [("eq", "==", torch.eq), ("ne", "!=", torch.ne),
                    ("lt", "<", torch.lt), ("le", "<=", torch.le),
                    ("gt", ">", torch.gt), ("ge", ">=", torch.ge)]:
    ROWS.append(Row(op, f"x {sym} y", TIES, "A B", fn, grad=False))
    ROWS.append(Row(op, f"x {sym} y", [In("x", "A B", "i64", -2, 3),
                    In("y", "B", "i64", -2, 3)], "A B", fn, grad=False,
                    label=f"x {sym} y i64", dtypes=("f64",)))

PQ = [In("p", "A B", "bool"), In("q", "B", "bool")]
ROWS += [
    Row("logical_and", "p and q", PQ, "A B", torch.logical_and, grad=False,
        dtypes=("f64",)),
    Row("logical_or", "p or q", PQ, "A B", torch.logical_or, grad=False,
        dtypes=("f64",)),
    Row("logical_not", "not p", PQ[:1], "A B", torch.logical_not,
        grad=False, dtypes=("f64",)),
    # Of two bools, torch.maximum is their or, minimum their and. (The table
    # compares the checker's typeof; the runtime dtype, bool, which was i64,
    # is checked in ops/tests/api_test.cpp.)
    Row("maximum", "maximum(p, q)", PQ, "A B", torch.maximum, grad=False,
        label="maximum of bools", dtypes=("f64",)),
    Row("minimum", "minimum(p, q)", PQ, "A B", torch.minimum, grad=False,
        label="minimum of bools", dtypes=("f64",)),
    Row("where", "where(c, x, y)", [In("c", "A B", "bool"), *XY], "A B",
        torch.where),
    Row("where", "where(x > 0.0, x, 0.0)", [X], "A B",
        lambda x: torch.where(x > 0, x, torch.zeros((), dtype=x.dtype)),
        label="where(x > 0.0, x, 0.0)"),
    Row("masked_fill", "masked_fill(x, c, -1.5)",
        [X, In("c", "B", "bool")], "A B",
        lambda x, c: x.masked_fill(c, -1.5)),
    Row("masked_fill", "masked_fill(x, c, -inf)",
        [X, In("c", "A B", "bool")], "A B",
        lambda x, c: x.masked_fill(c, float("-inf")),
        label="masked_fill -inf", grad=False),
]

# Where the derivative has a kink or a tie, torch's choice is the contract:
# relu'(0) = 0, abs'(0) = 0, clamp passes the gradient at a bound, maximum
# and minimum split it half and half at a tie.
ROWS += [
    Row("relu", "relu(x)", [In("x", "A B", values=ints_as_floats(-1, 2))],
        "A B", torch.relu, label="relu at 0"),
    Row("abs", "abs(x)", [In("x", "A B", values=ints_as_floats(-1, 2))],
        "A B", torch.abs, label="abs at 0"),
    Row("clip", "clip(x, -1.0, 1.0)", [In("x", "A B",
        values=ints_as_floats(-2, 3))], "A B",
        lambda x: torch.clamp(x, -1.0, 1.0), label="clip at its bounds"),
    Row("clip", "clip(x, lo, hi)", [X, In("lo", "B", lo=-1.5, hi=-0.2),
        In("hi", "B", lo=0.2, hi=1.5)], "A B", torch.clamp,
        label="clip by tensors"),
    Row("maximum", "maximum(x, y)", TIES, "A B", torch.maximum,
        label="maximum ties"),
    Row("minimum", "minimum(x, y)", TIES, "A B", torch.minimum,
        label="minimum ties"),
    Row("pow", "x ** 2.0", [X], "A B", lambda x: x ** 2, label="x ** 2.0"),
    Row("sqrt", "sqrt(x)", [In("x", "A B", lo=1e-6, hi=1e-3)], "A B",
        torch.sqrt, label="sqrt small"),
    Row("exp", "exp(x)", [In("x", "A B", lo=-80, hi=80)], "A B", torch.exp,
        label="exp wide range"),
    # Near 0 e^x - 1 in f32 would lose every digit below 6e-8 (about 6% of
    # 1e-6); expm1 keeps them, so this row holds it to rtol 1e-5 there.
    Row("expm1", "expm1(x)", [In("x", "A B", lo=-1e-6, hi=1e-6)], "A B",
        torch.expm1, label="expm1 near 0"),
    # Conversions to the 16-bit floats round to nearest even, as torch's.
    Row("to", "to(to(x, bf16), f64)", [In("x", "A B", lo=-300, hi=300)],
        "A B", lambda x: x.bfloat16().double(), grad=False,
        label="to bf16 rounds", dtypes=("f64",)),
    Row("to", "to(to(x, f16), f64)", [In("x", "A B", lo=-300, hi=300)],
        "A B", lambda x: x.half().double(), grad=False,
        label="to f16 rounds", dtypes=("f64",)),
    Row("to", "to(to(x, f16), f32)", [In("x", "A B", lo=-1e-4, hi=1e-4)],
        "A B", lambda x: x.half().float(), grad=False,
        label="to f16 subnormals", dtypes=("f32",)),
]

# Integer operands: results and dtypes as torch's (torch.result_type and
# its reductions' promotions: an i32 sum, prod or cumsum is i64 in torch).
K = In("k", "A B", "i64", -5, 6)
K32 = In("k", "A B", "i32", -5, 6)
ROWS += [Row(op, call, [inp], out, fn, grad=False, dtypes=("f32",),
             label=f"{call} {inp.kind}") for op, call, inp, out, fn in [
    ("abs", "abs(k)", K, "A B", torch.abs),
    ("neg", "-k", K32, "A B", torch.neg),
    ("sign", "sign(k)", K, "A B", torch.sign),
    ("exp", "exp(k)", K, "A B", torch.exp),
    ("expm1", "expm1(k)", K, "A B", torch.expm1),
    ("sqrt", "sqrt(abs(k))", K32, "A B", lambda k: torch.sqrt(k.abs())),
    ("pow", "k ** 2", K, "A B", lambda k: k ** 2),
    ("div", "k / 2", K, "A B", lambda k: k / 2),
    ("floordiv", "k // 2", K32, "A B", lambda k: torch.div(
        k, 2, rounding_mode="floor")),
    ("mod", "k % 3", K, "A B", lambda k: torch.remainder(k, 3)),
    ("maximum", "maximum(k, 0)", K32, "A B",
     lambda k: torch.maximum(k, torch.zeros((), dtype=k.dtype))),
    ("sum", "sum(k)", K32, "", torch.sum),
    ("sum", "sum(k, over=A)", K32, "B", lambda k: k.sum(0)),
    ("prod", "prod(k, over=B)", K32, "A", lambda k: k.prod(1)),
    ("cumsum", "cumsum(k, over=B)", K32, "A B", lambda k: k.cumsum(1)),
    ("max", "max(k, over=B)", K32, "A", lambda k: k.amax(1)),
    ("mean", "mean(k, over=B)", K32, "A", lambda k: k.float().mean(1)),
    ("clip", "clip(k, -2, 3)", K, "A B", lambda k: k.clamp(-2, 3)),
    ("where", "where(k > 0, k, 0)", K32, "A B",
     lambda k: torch.where(k > 0, k, torch.zeros((), dtype=k.dtype))),
]]

# Mixed float dtypes promote as torch.result_type: f32 with f64 is f64.
X32, Y64 = In("x", "A B", "f32"), In("y", "B", "f64")
ROWS += [
    Row("add", "x + y", [X32, Y64], "A B", torch.add, label="f32 + f64",
        dtypes=("f64",)),
    Row("mul", "x * y", [X32, Y64], "A B", torch.mul, label="f32 * f64",
        dtypes=("f64",)),
    Row("where", "where(c, x, y)", [In("c", "A B", "bool"), X32, Y64],
        "A B", torch.where, label="where f32 f64", dtypes=("f64",)),
    Row("maximum", "maximum(x, y)", [X32, Y64], "A B", torch.maximum,
        label="maximum f32 f64", dtypes=("f64",)),
    Row("to", "to(x, bool)", [In("x", "A B", values=ints_as_floats(-1, 2))],
        "A B", lambda x: x.bool(), grad=False, label="to(x, bool)"),
    Row("to", "to(c, f32)", [In("c", "A B", "bool")], "A B",
        lambda c: c.float(), grad=False, label="to(c, f32)",
        dtypes=("f32",)),
    Row("gelu", 'gelu(x, approximate="none")', [X], "A B", F.gelu,
        label='gelu approximate="none"'),
]

# Broadcasting's VJP: literal 1 axes on both sides, a 0-d operand, an input
# used twice (its gradients add).
ROWS += [
    Row("add", "x + y", [In("x", "A 1"), In("y", "1 B")], "A B", torch.add,
        label="[A 1] + [1 B]"),
    Row("div", "x / s", [X, In("s", "", lo=0.5, hi=2.0)], "A B", torch.div,
        label="x / 0-d"),
    Row("mul", "x * x + sin(x)", [X], "A B", lambda x: x * x + torch.sin(x),
        label="x used three times"),
    Row("pow", "x ** 0.5", [POS], "A B", torch.sqrt, label="x ** 0.5"),
    Row("where", "where(c, x, 0.5)", [In("c", "B", "bool"), X], "A B",
        lambda c, x: torch.where(c, x, torch.tensor(0.5, dtype=x.dtype)),
        label="where broadcast condition"),
]
