"""Torch rows of the reductions and the ops along an axis."""

import numpy as np
import torch

from op_row import In, Row


def distinct(rng, shape):
    """A shuffle of distinct values 0.1 apart: no ties for max, sort, topk,
    argmax (a tie's index would be the implementation's choice)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape)


def distinct_nan(rng, shape):
    """distinct with NaNs: one or two in each line of the last axis."""
    v = distinct(rng, shape)
    v[..., 1] = np.nan
    v[::2, ..., 3] = np.nan
    return v


X = In("x", "A B C")
D = In("x", "A B C", values=distinct)
NAN_D = In("x", "A B C", values=distinct_nan)
ROWS = []
for op, fn in [("sum", torch.sum), ("mean", torch.mean)]:
    ROWS += [
        Row(op, f"{op}(x)", [X], "", fn),
        Row(op, f"{op}(x, over=B)", [X], "A C", lambda x, fn=fn: fn(x, 1)),
        Row(op, f"{op}(x, over=(A, C))", [X], "B",
            lambda x, fn=fn: fn(x, (0, 2))),
        Row(op, f"{op}(x, over=-1)", [X], "A B",
            lambda x, fn=fn: fn(x, -1)),
    ]
ROWS += [
    Row("sum", "sum(c)", [In("c", "A B", "bool")], "",
        lambda c: c.sum(), grad=False, dtypes=("f64",)),
    Row("mean", "mean(c)", [In("c", "A B", "bool")], "",
        lambda c: c.float().mean(), grad=False, dtypes=("f32",)),
    Row("sum", "sum(k, over=B)", [In("k", "A B", "i64", -5, 5)], "A",
        lambda k: k.sum(1), grad=False, dtypes=("f64",)),
    Row("max", "max(x, over=B)", [D], "A C", lambda x: x.amax(1)),
    Row("min", "min(x, over=(A, C))", [D], "B", lambda x: x.amin((0, 2))),
    Row("max", "max(x)", [D], "", torch.max),
    Row("prod", "prod(x, over=C)", [In("x", "A B C", lo=0.5, hi=1.5)],
        "A B", lambda x: x.prod(2)),
    Row("prod", "prod(x)", [In("x", "A B", lo=0.5, hi=1.5)], "", torch.prod),
    Row("std", "std(x, over=B)", [X], "A C", lambda x: x.std(1)),
    Row("std", "std(x)", [X], "", torch.std),
    Row("var", "var(x, over=(A, B))", [X], "C", lambda x: x.var((0, 1))),
    Row("var", "var(x)", [X], "", torch.var),
    Row("logsumexp", "logsumexp(x, over=C)", [In("x", "A B C", lo=-30,
        hi=30)], "A B", lambda x: x.logsumexp(2)),
    Row("logsumexp", "logsumexp(x)", [X], "", lambda x: x.logsumexp((0, 1,
        2))),
    Row("norm", "norm(x, over=B)", [X], "A C",
        lambda x: torch.linalg.vector_norm(x, dim=1)),
    Row("norm", "norm(x)", [X], "", lambda x: torch.linalg.vector_norm(x)),
    Row("argmax", "argmax(x, over=B)", [D], "A C", lambda x: x.argmax(1),
        grad=False),
    Row("argmin", "argmin(x, over=C)", [D], "A B", lambda x: x.argmin(2),
        grad=False),
    Row("any", "any(c, over=B)", [In("c", "A B", "bool")], "A",
        lambda c: c.any(1), grad=False, dtypes=("f64",)),
    Row("all", "all(c, over=A)", [In("c", "A B", "bool",
        values=lambda r, s: r.uniform(size=s) < 0.8)], "B",
        lambda c: c.all(0), grad=False, dtypes=("f64",)),
    Row("any", "any(c)", [In("c", "A B", "bool")], "", torch.any,
        grad=False, dtypes=("f64",)),
    Row("reduce", "reduce(x, over=B)", [X], "A C", lambda x: x.sum(1)),
    Row("reduce", 'reduce(x, over=B, with=max)', [D], "A C",
        lambda x: x.amax(1)),
    Row("reduce", 'reduce(x, over=(A, C), with=min)', [D], "B",
        lambda x: x.amin((0, 2))),
    Row("reduce", 'reduce(x, over=C, with=prod)', [In("x", "A B C",
        lo=0.5, hi=1.5)], "A B", lambda x: x.prod(2)),
    Row("reduce", 'reduce(x, over=A, with=mean)', [X], "B C",
        lambda x: x.mean(0)),
]

# keepdim=true (Note [keepdim]): each reduced axis kept as a 1, as torch's
# keepdim=True.
K = dict(keepdim=True)
ROWS += [
    Row("sum", "sum(x, over=B, keepdim=true)", [X], "A 1 C",
        lambda x: x.sum(1, **K)),
    Row("sum", "sum(x, keepdim=true)", [X], "1 1 1",
        lambda x: x.sum((0, 1, 2), **K)),
    Row("mean", "mean(x, over=(A, C), keepdim=true)", [X], "1 B 1",
        lambda x: x.mean((0, 2), **K)),
    Row("mean", "x - mean(x, over=C, keepdim=true)", [X], "A B C",
        lambda x: x - x.mean(2, **K), label="mean keepdim broadcast"),
    Row("max", "max(x, over=B, keepdim=true)", [D], "A 1 C",
        lambda x: x.amax(1, **K)),
    Row("min", "min(x, over=C, keepdim=true)", [D], "A B 1",
        lambda x: x.amin(2, **K)),
    Row("prod", "prod(x, over=C, keepdim=true)",
        [In("x", "A B C", lo=0.5, hi=1.5)], "A B 1",
        lambda x: x.prod(2, **K)),
    Row("std", "std(x, over=B, keepdim=true)", [X], "A 1 C",
        lambda x: x.std(1, **K)),
    Row("var", "var(x, over=(A, B), keepdim=true)", [X], "1 1 C",
        lambda x: x.var((0, 1), **K)),
    Row("logsumexp", "logsumexp(x, over=C, keepdim=true)", [X], "A B 1",
        lambda x: x.logsumexp(2, **K)),
    Row("norm", "norm(x, over=B, keepdim=true)", [X], "A 1 C",
        lambda x: torch.linalg.vector_norm(x, dim=1, **K)),
    Row("argmax", "argmax(x, over=B, keepdim=true)", [D], "A 1 C",
        lambda x: x.argmax(1, **K), grad=False),
    Row("argmin", "argmin(x, over=C, keepdim=true)", [D], "A B 1",
        lambda x: x.argmin(2, **K), grad=False),
    Row("any", "any(c, over=B, keepdim=true)", [In("c", "A B", "bool")],
        "A 1", lambda c: c.any(1, **K), grad=False, dtypes=("f64",)),
    Row("all", "all(c, over=A, keepdim=true)", [In("c", "A B", "bool",
        values=lambda r, s: r.uniform(size=s) < 0.8)], "1 B",
        lambda c: c.all(0, **K), grad=False, dtypes=("f64",)),
    Row("reduce", "reduce(x, over=B, with=max, keepdim=true)", [D], "A 1 C",
        lambda x: x.amax(1, **K)),
]

# Along an axis.
ROWS += [
    Row("softmax", "softmax(x, over=B)", [X], "A B C",
        lambda x: torch.softmax(x, 1)),
    Row("softmax", "softmax(x, over=C)", [In("x", "A B C", lo=-40, hi=40)],
        "A B C", lambda x: torch.softmax(x, 2), label="softmax large logits"),
    Row("log_softmax", "log_softmax(x, over=C)", [X], "A B C",
        lambda x: torch.log_softmax(x, 2)),
    Row("log_softmax", "log_softmax(x, over=A)", [In("x", "A B C", lo=-40,
        hi=40)], "A B C", lambda x: torch.log_softmax(x, 0),
        label="log_softmax large logits"),
    Row("cumsum", "cumsum(x, over=B)", [X], "A B C",
        lambda x: torch.cumsum(x, 1)),
    Row("sort", "sort(x, over=C)", [D], ["A B C", "A B C"],
        lambda x: tuple(torch.sort(x, 2))),
    # NaN above every number: last in sort, first in topk, argmax's and
    # argmin's (the runtime fuzzer's oracle: ref/ ordered NaN as it met
    # it).
    # Bools stay bools (the runtime fuzzer's oracle: the op gave i64).
    Row("scatter", "scatter(c, i, v, over=B)", [In("c", "A B", "bool"),
        In("i", "A 2", "i64", values=lambda r, s: np.tile([3, 0], (3, 1))),
        In("v", "A 2", "bool")], "A B",
        lambda c, i, v: torch.scatter(c, 1, i, v), grad=False,
        label="scatter bool", dtypes=("f64",)),
    Row("sort", "sort(x, over=C)", [NAN_D], ["A B C", "A B C"],
        lambda x: tuple(torch.sort(x, 2)), grad=False, label="sort NaN"),
    Row("topk", "topk(x, 2, over=C)", [NAN_D], ["A B 2", "A B 2"],
        lambda x: tuple(torch.topk(x, 2, 2)), grad=False, label="topk NaN"),
    Row("argmax", "argmax(x, over=C)", [NAN_D], "A B",
        lambda x: x.argmax(2), grad=False, label="argmax NaN"),
    Row("argmin", "argmin(x, over=C)", [NAN_D], "A B",
        lambda x: x.argmin(2), grad=False, label="argmin NaN"),
    Row("topk", "topk(x, 2, over=B)", [D], ["A 2 C", "A 2 C"],
        lambda x: tuple(torch.topk(x, 2, 1))),
    Row("gather", "gather(x, idx, over=B)",
        [In("x", "A B"), In("idx", "A C", "i64", 0, 4)], "A C",
        lambda x, idx: torch.gather(x, 1, idx)),
    Row("scatter", "scatter(x, idx, v, over=B)",
        [In("x", "A B"), In("idx", "A 1", "i64", 0, 4), In("v", "A 1")],
        "A B", lambda x, idx, v: torch.scatter(x, 1, idx, v)),
]

# Ties and masks: torch's amax/amin split the gradient evenly among tied
# maxima; a softmax over a row with -inf entries (a causal mask) gives them
# 0 and no NaN.
TIED = In("x", "A B C", values=lambda r, s: r.integers(0, 3, s).astype(float))
ROWS += [
    Row("max", "max(x, over=B)", [TIED], "A C", lambda x: x.amax(1),
        label="max ties"),
    Row("min", "min(x)", [TIED], "", lambda x: x.amin(), label="min ties"),
    Row("reduce", "reduce(x, over=C, with=max)", [TIED], "A B",
        lambda x: x.amax(2), label="reduce max ties"),
    Row("argmax", "argmax(x)", [D], "", torch.argmax, grad=False,
        label="argmax all axes"),
    Row("mean", "mean(k)", [In("k", "A B", "i64", -5, 5)], "",
        lambda k: k.float().mean(), grad=False, dtypes=("f32",),
        label="mean of ints"),
    Row("softmax", "softmax(masked_fill(x, c, -inf), over=B)",
        [In("x", "A B"), In("c", "A B", "bool", values=lambda r, s:
                            np.tril(np.ones(s, bool), -1))], "A B",
        lambda x, c: torch.softmax(x.masked_fill(c, float("-inf")), 1),
        label="softmax masked"),
    Row("logsumexp", "logsumexp(masked_fill(x, c, -inf), over=B)",
        [In("x", "A B"), In("c", "A B", "bool", values=lambda r, s:
                            np.tril(np.ones(s, bool), -1))], "A",
        lambda x, c: x.masked_fill(c, float("-inf")).logsumexp(1),
        label="logsumexp masked"),
    Row("cumsum", "cumsum(x, over=A)", [X], "A B C",
        lambda x: torch.cumsum(x, 0), label="cumsum over A"),
]

# Zeros: prod's gradient is the product of the others (not prod / x), and
# a zero vector's norm has gradient 0 (torch masks 0/0).
WITH_ZEROS = In("x", "A B C", values=lambda r, s: np.where(
    r.uniform(size=s) < 0.25, 0.0, r.uniform(0.5, 1.5, s)))
ROWS += [
    Row("prod", "prod(x, over=C)", [WITH_ZEROS], "A B",
        lambda x: x.prod(2), label="prod with zeros"),
    Row("norm", "norm(x, over=C)", [In("x", "A B C", values=lambda r, s:
        np.where(np.arange(s[0])[:, None, None] == 1, 0.0,
                 r.uniform(-1, 1, s)))], "A B",
        lambda x: torch.linalg.vector_norm(x, dim=2),
        label="norm of a zero vector"),
]

# torch.argmax and argmin return the first of tied extremes (documented).
ROWS += [
    Row("argmax", "argmax(x, over=B)", [TIED], "A C", lambda x: x.argmax(1),
        grad=False, label="argmax ties"),
    Row("argmin", "argmin(x, over=C)", [TIED], "A B", lambda x: x.argmin(2),
        grad=False, label="argmin ties"),
]

# Long f32 reductions held to the table's 1e-5: a sequential f32 sum of
# 65536 values in [0, 1) errs by 1e-6 to 1e-5 (numpy's cumsum, measured),
# torch's pairwise sum by 1e-7, so these catch an accumulation as plain as
# the sequential one or worse. (About a second each.)
BIG = {"B": 65536}
ROWS += [
    Row("sum", "sum(x, over=B)", [In("x", "A B", lo=0, hi=1)], "A",
        lambda x: x.sum(1), dims=BIG, label="sum of 65536 f32",
        dtypes=("f32",)),
    Row("layer_norm", "layer_norm(x, over=B)", [In("x", "A B", lo=0, hi=1)],
        "A B", lambda x: torch.nn.functional.layer_norm(x, (65536,)),
        dims=BIG, label="layer_norm of 65536 f32", dtypes=("f32",)),
]

ROWS += [
    Row("sum", "sum(x, over=(A, B, C))", [X], "", torch.sum,
        label="sum over every axis by name"),
    Row("mean", "mean(x, over=0)", [X], "B C", lambda x: x.mean(0),
        label="mean over=0"),
    Row("std", "std(x, over=(A, C))", [X], "B", lambda x: x.std((0, 2)),
        label="std over two axes"),
    Row("softmax", "softmax(x, over=A)", [X], "A B C",
        lambda x: torch.softmax(x, 0), label="softmax over A"),
    Row("sort", "sort(x, over=A)", [D], ["A B C", "A B C"],
        lambda x: tuple(torch.sort(x, 0)), label="sort over A"),
    Row("topk", "topk(x, 5, over=C)", [D], ["A B 5", "A B 5"],
        lambda x: tuple(torch.topk(x, 5, 2)), label="topk all"),
    Row("gather", "gather(x, idx, over=A)",
        [In("x", "A B"), In("idx", "C B", "i64", 0, 3)], "C B",
        lambda x, idx: torch.gather(x, 0, idx), label="gather over A"),
    Row("scatter", "scatter(x, idx, v, over=A)",
        [In("x", "A B"), In("idx", "1 B", "i64", 0, 3), In("v", "1 B")],
        "A B", lambda x, idx, v: torch.scatter(x, 0, idx, v),
        label="scatter over A"),
]
