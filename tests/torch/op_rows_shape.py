"""Torch rows of matmul, einsum, the pattern and shape ops, and the makers."""

import numpy as np
import torch

from op_row import In, Row

X = In("x", "A B")


def _put_in_order(x, i, v):
    """x with column i[j] set to v[:, j], j in order: the last write wins."""
    y = x.clone()
    for j in range(len(i)):
        y[:, i[j]] = v[:, j]
    return y


ROWS = [
    Row("matmul", "x @ y", [X, In("y", "B C")], "A C", torch.matmul),
    Row("matmul", "matmul(x, y)", [X, In("y", "B")], "A", torch.matmul),
    Row("matmul", "x @ y", [In("x", "E A B"), In("y", "E B C")], "E A C",
        torch.matmul, label="batched x @ y"),
    Row("matmul", "x @ y", [In("x", "E A B"), In("y", "B C")], "E A C",
        torch.matmul, label="[E A B] @ [B C]"),
    Row("matmul", "x @ y", [In("x", "A B", "i64", -3, 3),
        In("y", "B C", "i64", -3, 3)], "A C", torch.matmul,
        label="i64 @ i64", dtypes=("f64",)),
    # i32 stays i32, as the rule types it (the runtime fuzzer's oracle: the
    # op returned i64).
    Row("matmul", "x @ y", [In("x", "A B", "i32", -3, 3),
        In("y", "B C", "i32", -3, 3)], "A C", torch.matmul,
        label="i32 @ i32", dtypes=("f64",)),
    # Issue 10's einsum: a label contracted between two operands (it was
    # summed out of each operand first).
    Row("einsum", "einsum(x, y, n d, t d -> n t)",
        [In("x", "A B"), In("y", "C B")], "A C",
        lambda x, y: torch.einsum("nd,td->nt", x, y)),
    Row("einsum", "einsum(x, y, b h n d, b h t d -> b h n t)",
        [In("x", "E A C B"), In("y", "E A D B")], "E A C D",
        lambda x, y: torch.einsum("bhnd,bhtd->bhnt", x, y),
        label="einsum attention scores"),
    Row("einsum", "einsum(x, y, z, i j, j k, k -> i)",
        [In("x", "A B"), In("y", "B C"), In("z", "C")], "A",
        lambda x, y, z: torch.einsum("ij,jk,k->i", x, y, z),
        label="einsum three operands"),
    Row("einsum", "einsum(x, i j -> j i)", [X], "B A",
        lambda x: torch.einsum("ij->ji", x), label="einsum transpose"),
    Row("einsum", "einsum(x, y, i j, i j -> i)", [X, In("y", "A B")], "A",
        lambda x, y: torch.einsum("ij,ij->i", x, y),
        label="einsum rowwise dot"),
    Row("rearrange", "rearrange(x, a b c -> c (a b))", [In("x", "A B C")],
        "C (A B)", lambda x: x.permute(2, 0, 1).reshape(5, 12)),
    Row("rearrange", "rearrange(x, a (E d) -> E a d)",
        [In("x", "A (E B)")], "E A B",
        lambda x: x.reshape(3, 2, 4).permute(1, 0, 2),
        label="rearrange ungroup"),
    Row("rearrange", "rearrange(x, a (h d) -> h a d)",
        [In("x", "A (E B)")], "E A B",
        lambda x: x.reshape(3, 2, 4).permute(1, 0, 2),
        label="rearrange ungroup by the type's group"),
    Row("split", "split(x, a (3 d) -> a d)", [In("x", "A (3 B)")],
        ["A B", "A B", "A B"], lambda x: tuple(x.reshape(3, 3, 4).unbind(1))),
    # A literal size when every size is static (library.md): [A 8].
    Row("concat", "concat([x, y], over=B)",
        [X, In("y", "A B")], "A 8", lambda x, y: torch.cat([x, y], 1)),
    Row("stack", "stack([x, y, x], new=A)", [X, In("y", "A B")],
        "A A B", lambda x, y: torch.stack([x, y, x])),
    Row("take", "take(x, 2, over=B)", [X], "A", lambda x: x[:, 2]),
    Row("take", "take(x, i, over=B)", [X, In("i", "C", "i64", 0, 4)],
        "A C", lambda x, i: x[:, i], label="take index tensor"),
    Row("put", "put(x, 1, v, over=A)", [X, In("v", "B")], "A B",
        lambda x, v: torch.cat([x[:1], v[None], x[2:]])),
    Row("roll", "roll(x, 1, over=B)", [X], "A B",
        lambda x: torch.roll(x, 1, 1)),
    Row("roll", "roll(x, -2, over=A)", [X], "A B",
        lambda x: torch.roll(x, -2, 0), label="roll back"),
    Row("pad", "pad(x, over=B, to=6, value=0.5)", [X], "A 6",
        lambda x: torch.nn.functional.pad(x, (0, 2), value=0.5)),
    Row("reshape", "reshape(x, [B, A])", [X], "B A",
        lambda x: x.reshape(4, 3)),
    Row("to", "to(x, f64)", [X], "A B", lambda x: x, dtypes=("f32",),
        out_dtype="f64",
        tol={"f32": 1e-10}),  # exact: f32 -> f64 is exact
    Row("to", "to(x, f32)", [X], "A B", lambda x: x.float(),
        label="to(x, f32)"),
    Row("to", "to(x, i64)", [X], "A B", lambda x: x.long(), grad=False,
        label="to(x, i64)"),
    Row("to", "to(k, f64)", [In("k", "A B", "i64", -9, 9)], "A B",
        lambda k: k.double(), grad=False, label="to(k, f64)",
        dtypes=("f64",)),
    Row("size", "size(x, B)", [X], "", lambda x: torch.tensor(x.shape[1]),
        grad=False, dtypes=("f64",), out_dtype="int"),
    Row("stop_grad", "stop_grad(x) * x", [X], "A B",
        lambda x: x.detach() * x),
]

# The makers: no inputs; torch builds the same tensor.
ROWS += [
    Row("tensor", "tensor([[1.5, -2.0], [0.25, 3.0]], dtype=f64)", [],
        "2 2", lambda: torch.tensor([[1.5, -2.0], [0.25, 3.0]],
                                    dtype=torch.float64), grad=False,
        dtypes=("f64",)),
    Row("tensor", "tensor([1, 2, 3])", [], "3",
        lambda: torch.tensor([1, 2, 3]),
        grad=False, dtypes=("f64",), label="tensor of ints"),
    # A number gives a 0-d tensor (it gave [0] before), exactly in f64.
    Row("tensor", "tensor(0.1, dtype=f64)", [], "",
        lambda: torch.tensor(0.1, dtype=torch.float64), grad=False,
        dtypes=("f64",), label="tensor of a number"),
    Row("zeros", "zeros([A, B]) + x", [X], "A B", lambda x: x + 0),
    Row("ones", "ones([A, B]) * x", [X], "A B", lambda x: x * 1),
    Row("full", "full([A, B], 2.5) * x", [X], "A B", lambda x: x * 2.5),
    Row("arange", "arange(5)", [], "5", lambda: torch.arange(5), grad=False,
        dtypes=("f64",)),
    Row("zeros_like", "zeros_like(x) + x * 2.0", [X], "A B",
        lambda x: torch.zeros_like(x) + x * 2),
    Row("ones_like", "ones_like(x) * x", [X], "A B",
        lambda x: torch.ones_like(x) * x),
    Row("causal", "causal(A, B)", [], "A B",
        lambda: torch.tril(torch.ones(3, 4, dtype=torch.bool)), grad=False,
        dtypes=("f64",)),
]

ROWS += [
    Row("take", "take(x, -1, over=B)", [X], "A", lambda x: x[:, -1],
        label="take -1"),
    Row("take", "x[1]", [X], "B", lambda x: x[1], label="x[1]"),
    Row("take", "x[1:3]", [X], "2 B", lambda x: x[1:3], label="x[1:3]"),
    Row("pad", "pad(x, over=A, to=5)", [X], "5 B",
        lambda x: torch.nn.functional.pad(x, (0, 0, 0, 2)), label="pad A"),
    Row("put", "put(x, i, v, over=B)", [X, In("i", "2", "i64",
        values=lambda r, s: np.array([3, 0])), In("v", "A 2")], "A B",
        lambda x, i, v: x.index_put((torch.arange(3)[:, None], i), v),
        label="put index tensor"),
    # An index given twice (3 and -1 of 4) is written once, by its last
    # slice, as numpy's x[:, i] = v (the runtime fuzzer's oracle: the op
    # wrote 2v - x there).
    Row("put", "put(x, i, v, over=B)", [X, In("i", "3", "i64",
        values=lambda r, s: np.array([3, -1, 0])), In("v", "A 3")], "A B",
        lambda x, i, v: _put_in_order(x, i, v), label="put repeated index"),
    # Bools stay bools (the runtime fuzzer's oracle: the op gave i64).
    Row("put", "put(c, i, v, over=B)", [In("c", "A B", "bool"),
        In("i", "2", "i64", values=lambda r, s: np.array([3, 0])),
        In("v", "A 2", "bool")], "A B",
        lambda c, i, v: c.index_put((torch.arange(3)[:, None], i), v),
        grad=False, label="put bool", dtypes=("f64",)),
]

ROWS += [
    Row("matmul", "x @ y", [In("x", "B"), In("y", "B")], "", torch.matmul,
        label="[B] @ [B]"),
    Row("matmul", "x @ y", [In("x", "B"), In("y", "B C")], "C",
        torch.matmul, label="[B] @ [B C]"),
    Row("einsum", "einsum(x, a b -> b)", [X], "B",
        lambda x: torch.einsum("ab->b", x), label="einsum sum of one"),
    Row("rearrange", "rearrange(x, a b -> a 1 b)", [X], "A 1 B",
        lambda x: x[:, None], label="rearrange literal 1"),
    Row("split", "split(x, (2 a) b -> a b)", [In("x", "(2 A) B")],
        ["A B", "A B"], lambda x: tuple(x.reshape(2, 3, 4).unbind(0)),
        label="split leading"),
    Row("roll", "roll(x, 6, over=B)", [X], "A B",
        lambda x: torch.roll(x, 6, 1), label="roll past the size"),
    # 2^53 + 7: through a double the shift was 2^53 + 8, 0 mod 4, and the
    # array came back unrolled (issue 32, item 2).
    Row("roll", "roll(x, 9007199254740999, over=B)", [X], "A B",
        lambda x: torch.roll(x, 9007199254740999, 1),
        label="roll by an int above 2^53"),
    Row("pad", "pad(x, over=B, to=4)", [X], "A 4", lambda x: x * 1,
        label="pad to its own size"),
]
