"""Torch rows of the nn builtins (library.md's "nn" group and the stdlib
models' ops)."""

import math

import numpy as np
import torch
import torch.nn.functional as F

from op_row import In, Row
from op_rows_reduce import distinct

X = In("x", "A B")
LN = In("ln", "", model="LayerNorm[B]")


def layer_norm_rows():
    return [
        Row("layer_norm", "layer_norm(x, over=B)", [X], "A B",
            lambda x: F.layer_norm(x, (4,))),
        Row("layer_norm", "layer_norm(x, over=B, affine=ln)", [X, LN], "A B",
            lambda x, ln: F.layer_norm(x, (4,), ln["g"], ln["b"])),
        Row("layer_norm", "layer_norm(x, over=B, eps=0.1)", [X], "A B",
            lambda x: F.layer_norm(x, (4,), eps=0.1)),
        # Inputs far from 0 mean: the variance must not cancel.
        Row("layer_norm", "layer_norm(x, over=(B, C))",
            [In("x", "A B C", lo=9.0, hi=11.0)], "A B C",
            lambda x: F.layer_norm(x, (4, 5)), label="layer_norm offset"),
        # rms_norm: torch 1.13 has none; this is its definition,
        # x / sqrt(mean(x^2) + eps), with the default eps of 1e-6
        # (ops/defs/nn.cpp; library.md names no default: see the report).
        Row("rms_norm", "rms_norm(x, over=B)", [X], "A B",
            lambda x: x * torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-6)),
        Row("rms_norm", "rms_norm(x, over=B, eps=0.5)", [X], "A B",
            lambda x: x * torch.rsqrt((x * x).mean(1, keepdim=True) + 0.5)),
    ]


def batch_norm(x, bn, train):
    """torch's batch_norm over every axis but 1; the running stats updated
    on copies (they are read back as the row's extra outputs)."""
    rm, rv = bn["running_mean"].clone(), bn["running_var"].clone()
    y = F.batch_norm(x, rm, rv, bn["g"], bn["b"], training=train,
                     momentum=0.1, eps=1e-5)
    return y, rm, rv


def batch_norm_rows():
    bn = In("bn", "", model="BatchNorm[B]")
    rows = []
    for label, axes, mode, train in [
            ("train [A B]", "A B", "Train(seed=0)", True),
            ("train [E B C D]", "E B C D", "Train(seed=0)", True),
            ("eval [A B C]", "A B C", "Eval", False)]:
        rows.append(Row(
            "batch_norm", f"batch_norm(x, bn, {mode})", [In("x", axes), bn],
            axes, lambda x, bn, t=train: batch_norm(x, bn, t)[0],
            label="batch_norm " + label,
            extra={"running_mean": "m.bn.running_mean",
                   "running_var": "m.bn.running_var"},
            torch_extra=lambda x, bn, t=train: dict(zip(
                ("running_mean", "running_var"), batch_norm(x, bn, t)[1:]))))
    return rows


def cross_entropy_rows():
    logits = In("z", "A C", lo=-3, hi=3)
    return [
        Row("cross_entropy", "cross_entropy(z, y)",
            [logits, In("y", "A", "i64", 0, 5)], "", F.cross_entropy),
        Row("cross_entropy", "cross_entropy(z, y)",
            [In("z", "E A C", lo=-3, hi=3), In("y", "E A", "i64", 0, 5)], "",
            lambda z, y: F.cross_entropy(z.reshape(-1, 5), y.reshape(-1)),
            label="cross_entropy [E A C]"),
        Row("cross_entropy", "cross_entropy(z, y)",
            [In("z", "A C", lo=-40, hi=40), In("y", "A", "i64", 0, 5)], "",
            F.cross_entropy, label="cross_entropy large logits"),
        # Probabilities as the label (rows of a softmax), as torch's
        # probability targets.
        Row("cross_entropy", "cross_entropy(z, softmax(p, over=C))",
            [logits, In("p", "A C", grad=False)], "",
            lambda z, p: F.cross_entropy(z, torch.softmax(p, 1)),
            label="cross_entropy probabilities"),
        Row("mse", "mse(x, y)", [X, In("y", "B")], "",
            lambda x, y: ((x - y) ** 2).mean()),
        Row("mse", "mse(x, y)", [X, In("y", "A B")], "", F.mse_loss,
            label="mse same shape"),
    ]


def conv_rows():
    # x: [b C h w] = [E B 7 6]; k: [O C kh kw] = [A B 3 3]
    dims = {"H": 7, "W": 6}
    x, k = In("x", "E B H W"), In("k", "A B 3 3", lo=-0.5, hi=0.5)
    rows = []
    for stride, pad, out in [(1, 0, "E A 5 4"), (2, 1, "E A 4 W/2"),
                             (1, 2, "E A 9 8")]:
        rows.append(Row(
            "conv2d", f"conv2d(x, k, stride={stride}, padding={pad})",
            [x, k], out, lambda x, k, s=stride, p=pad: F.conv2d(x, k, None,
                                                                s, p),
            dims=dims))
    rows.append(Row("conv2d", "conv2d(x, k)", [x, In("k", "A B 2 1")],
                    "E A 6 W", F.conv2d, dims=dims, label="conv2d 2x1"))
    pool_x = In("x", "E A H W", values=distinct)
    dims6 = {"H": 6, "W": 4}
    rows += [
        Row("max_pool2d", "max_pool2d(x, 2)", [pool_x], "E A H/2 W/2",
            lambda x: F.max_pool2d(x, 2), dims=dims6),
        Row("avg_pool2d", "avg_pool2d(x, 2)", [In("x", "E A H W")],
            "E A H/2 W/2", lambda x: F.avg_pool2d(x, 2), dims=dims6),
    ]
    rows += conv_option_rows()
    return rows


def conv_option_rows():
    """conv2d's bias=, dilation= and groups= (depthwise too), conv1d,
    conv_transpose2d, pools with stride= and padding=, and
    adaptive_avg_pool2d, each against torch.nn.functional's."""
    dims = {"H": 7, "W": 6}
    x = In("x", "E B H W")            # [2 4 7 6]
    k = In("k", "A B 3 3", lo=-0.5, hi=0.5)
    bias = In("bias", "A")
    kg = In("k", "D 2 3 3", lo=-0.5, hi=0.5)  # 6 outputs, 2 groups of 2
    kd = In("k", "B 1 3 3", lo=-0.5, hi=0.5)  # depthwise: B groups of 1
    x1 = In("x", "E B W")
    k1 = In("k", "A B 3", lo=-0.5, hi=0.5)
    xt = In("x", "E B H W")
    kt = In("k", "B A 3 3", lo=-0.5, hi=0.5)   # [Cin Cout kh kw]
    kt2 = In("k", "B 3 2 3", lo=-0.5, hi=0.5)  # 2 groups: Cout 6
    px = In("x", "E A H W", values=distinct)
    return [
        Row("conv2d", "conv2d(x, k, padding=1, bias=bias)", [x, k, bias],
            "E A H W", lambda x, k, b: F.conv2d(x, k, b, 1, 1), dims=dims),
        Row("conv2d", "conv2d(x, k, padding=2, dilation=2)", [x, k],
            "E A H W", lambda x, k: F.conv2d(x, k, None, 1, 2, 2),
            dims=dims),
        Row("conv2d", "conv2d(x, k, stride=2, padding=1, groups=2)",
            [x, kg], "E D 4 W/2",
            lambda x, k: F.conv2d(x, k, None, 2, 1, 1, 2), dims=dims),
        Row("conv2d", "conv2d(x, k, padding=1, groups=4)", [x, kd],
            "E B H W", lambda x, k: F.conv2d(x, k, None, 1, 1, 1, 4),
            dims=dims, label="conv2d depthwise"),
        Row("conv1d", "conv1d(x, k, stride=2, padding=1, bias=bias)",
            [x1, k1, bias], "E A W/2",
            lambda x, k, b: F.conv1d(x, k, b, 2, 1), dims=dims),
        Row("conv1d", "conv1d(x, k, dilation=2)", [x1, k1], "E A 2",
            lambda x, k: F.conv1d(x, k, None, 1, 0, 2), dims=dims),
        Row("conv_transpose2d", "conv_transpose2d(x, k, bias=bias)",
            [xt, kt, bias], "E A 9 8",
            lambda x, k, b: F.conv_transpose2d(x, k, b), dims=dims),
        Row("conv_transpose2d",
            "conv_transpose2d(x, k, stride=2, padding=1, output_padding=1)",
            [xt, kt], "E A 14 12",
            lambda x, k: F.conv_transpose2d(x, k, None, 2, 1, 1),
            dims=dims),
        Row("conv_transpose2d",
            "conv_transpose2d(x, k, stride=2, groups=2, dilation=2)",
            [xt, kt2], "E 6 15 15",
            lambda x, k: F.conv_transpose2d(x, k, None, 2, 0, 0, 2, 2),
            dims=dims),
        Row("max_pool2d", "max_pool2d(x, 3, stride=2, padding=1)", [px],
            "E A 4 W/2", lambda x: F.max_pool2d(x, 3, 2, 1), dims=dims),
        Row("max_pool2d", "max_pool2d(x, 2, stride=1)", [px], "E A 6 5",
            lambda x: F.max_pool2d(x, 2, 1), dims=dims),
        Row("avg_pool2d", "avg_pool2d(x, 3, stride=2, padding=1)",
            [In("x", "E A H W")], "E A 4 W/2",
            lambda x: F.avg_pool2d(x, 3, 2, 1), dims=dims),
        Row("adaptive_avg_pool2d", "adaptive_avg_pool2d(x, 1)",
            [In("x", "E A H W")], "E A 1 1",
            lambda x: F.adaptive_avg_pool2d(x, 1), dims=dims),
        # A pair (oh, ow), windows that overlap (7 -> 3) and that do not.
        Row("adaptive_avg_pool2d", "adaptive_avg_pool2d(x, (3, 2))",
            [In("x", "E A H W")], "E A 3 2",
            lambda x: F.adaptive_avg_pool2d(x, (3, 2)), dims=dims,
            label="adaptive_avg_pool2d pair"),
        Row("adaptive_avg_pool2d", "adaptive_avg_pool2d(x, 4)",
            [In("x", "E A H W")], "E A 4 4",
            lambda x: F.adaptive_avg_pool2d(x, 4), dims=dims),
    ]


def other_rows():
    return [
        Row("embedding", "embedding(t, ids)",
            [In("t", "D B"), In("ids", "A C", "i64", 0, 6)], "A C B",
            lambda t, ids: F.embedding(ids, t)),
        Row("linear", "linear(l, x)", [X, In("l", "", model="Linear[B C]")],
            "A C", lambda x, lin: x @ lin["w"] + lin["b"]),
        Row("linear", "l.linear(x)", [In("x", "E A B"),
            In("l", "", model="Linear[B C]")], "E A C",
            lambda x, lin: F.linear(x, lin["w"].T, lin["b"]),
            label="l.linear(x) [E A B]"),
        # dropout's mask is drawn from Philox (torch's generator differs: its
        # ref row is the oracle of the draw); what torch can check: Eval and
        # p=0 are the identity, gradients included.
        # The VJP by grad(..) and through remat(..) (recomputed in the
        # backward pass: the same values).
        Row("grad", "layer_norm(tanh(x), over=B)", [X], "A B",
            lambda x: F.layer_norm(torch.tanh(x), (4,)), vjp="grad",
            label="grad(loss, m)"),
        Row("remat", "layer_norm(tanh(x), over=B)", [X], "A B",
            lambda x: F.layer_norm(torch.tanh(x), (4,)), vjp="remat",
            label="value_and_grad(remat(loss), m)"),
        Row("dropout", "dropout(x, 0.5, Eval)", [X], "A B", lambda x: x * 1),
        Row("dropout", "dropout(x, 0.0, Train(seed=3))", [X], "A B",
            lambda x: x * 1),
    ]


ROWS = (layer_norm_rows() + batch_norm_rows() + cross_entropy_rows() +
        conv_rows() + other_rows())

# i32 labels, ids and indices (torch takes int64: converted for it).
ROWS += [
    Row("cross_entropy", "cross_entropy(z, y)",
        [In("z", "A C", lo=-3, hi=3), In("y", "A", "i32", 0, 5)], "",
        lambda z, y: F.cross_entropy(z, y.long()),
        label="cross_entropy i32 labels"),
    Row("embedding", "embedding(t, ids)",
        [In("t", "D B"), In("ids", "A", "i32", 0, 6)], "A B",
        lambda t, ids: F.embedding(ids.long(), t), label="embedding i32"),
    Row("gather", "gather(x, idx, over=B)",
        [In("x", "A B"), In("idx", "A C", "i32", 0, 4)], "A C",
        lambda x, idx: torch.gather(x, 1, idx.long()), label="gather i32"),
]

ROWS += [
    Row("layer_norm", "layer_norm(x, over=A)", [In("x", "A B")], "A B",
        lambda x: F.layer_norm(x.T, (3,)).T, label="layer_norm over A"),
    # A window of equal values (relu's zeros before a pool): torch gives
    # the whole gradient to the first of them.
    Row("max_pool2d", "max_pool2d(relu(x), 2)", [In("x", "E A H W",
        values=lambda r, s: r.integers(-2, 2, s).astype(float))], "E A H/2 W/2",
        lambda x: F.max_pool2d(torch.relu(x), 2), dims={"H": 6, "W": 4},
        label="max_pool2d ties"),
    Row("max_pool2d", "max_pool2d(x, 2)", [In("x", "E A H W",
        values=distinct)], "E A 3 2", lambda x: F.max_pool2d(x, 2),
        dims={"H": 7, "W": 5}, label="max_pool2d odd sizes"),
    Row("avg_pool2d", "avg_pool2d(x, 3)", [In("x", "E A H W")], "E A 2 1",
        lambda x: F.avg_pool2d(x, 3), dims={"H": 7, "W": 5},
        label="avg_pool2d 3 odd sizes"),
]

# Masked logits (a vocabulary mask, causal attention): -inf entries get 0
# probability and no NaN, in the value or the gradient.
UPPER = In("c", "A C", "bool", values=lambda r, s: np.triu(
    np.ones(s, bool), 2))
ROWS += [
    Row("cross_entropy", "cross_entropy(masked_fill(z, c, -inf), y)",
        [In("z", "A C"), UPPER, In("y", "A", "i64", values=lambda r, s:
                                   np.zeros(s, np.int64))], "",
        lambda z, c, y: F.cross_entropy(z.masked_fill(c, float("-inf")), y),
        label="cross_entropy masked logits"),
    Row("log_softmax", "log_softmax(masked_fill(z, c, -inf), over=C)",
        [In("z", "A C"), UPPER], "A C",
        lambda z, c: torch.log_softmax(z.masked_fill(c, float("-inf")), 1),
        label="log_softmax masked"),
    Row("layer_norm", "layer_norm(x, over=B, affine=ln)", [In("x", "E A B"),
        LN], "E A B", lambda x, ln: F.layer_norm(x, (4,), ln["g"], ln["b"]),
        label="layer_norm affine [E A B]"),
    Row("batch_norm", "batch_norm(x, bn, Eval)", [In("x", "A B"),
        In("bn", "", model="BatchNorm[B]")], "A B",
        lambda x, bn: batch_norm(x, bn, False)[0],
        label="batch_norm eval 2-d"),
]


def sdpa(q, k, v, causal=False, scale=None):
    """torch 2's F.scaled_dot_product_attention (torch 1.13 has none): its
    documented math, in float64."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        n, t = s.shape[-2:]
        keep = torch.ones(n, t, dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, -1) @ v


# The fused attention (Note [Fused attention] in ops/cpu/cpu_attention.cpp)
# as a builtin, and the attention written out that the checker runs as it
# (Note [The attention written out] in interp/check/fusion.cpp): n = A = 3
# rows, t = C = 5 keys, d = B = 4, e = D = 6, and n = t = C.
ATTEND = """fn attend(q: [E A B] T, k: [E C B] T, v: [E C D] T) -> [E A D] T:
    let s = einsum(q, k, E A B, E C B -> E A C) / sqrt(B)
    let p = softmax(masked_fill(s, not causal(A, C), -inf), over=C)
    let o = einsum(p, v, E A C, E C D -> E A D)
    return o
"""
ATTEND_ALL = """fn attend(q: [E C B] T, k: [E C B] T, v: [E C D] T) -> [E C D] T:
    let s = einsum(q, k, E n B, E t B -> E n t) * 0.3
    let p = softmax(s, over=t)
    return einsum(p, v, E n t, E t D -> E n D)
"""
Q, K, VV = In("q", "E A B"), In("k", "E C B"), In("v", "E C D")
ROWS += [
    Row("scaled_dot_product_attention", "scaled_dot_product_attention(q, k, v)",
        [Q, K, VV], "E A D", sdpa),
    Row("scaled_dot_product_attention",
        "scaled_dot_product_attention(q, k, v, causal=true)", [Q, K, VV],
        "E A D", lambda q, k, v: sdpa(q, k, v, causal=True)),
    Row("scaled_dot_product_attention",
        "scaled_dot_product_attention(q, k, v, causal=true, scale=0.3)",
        [In("q", "E C B"), K, VV], "E C D",
        lambda q, k, v: sdpa(q, k, v, causal=True, scale=0.3)),
    Row(("scaled_dot_product_attention", "einsum", "masked_fill", "causal",
         "softmax"), "attend(q, k, v)", [Q, K, VV], "E A D",
        lambda q, k, v: sdpa(q, k, v, causal=True),
        label="attention written out, causal (fused)", prelude=ATTEND),
    Row(("scaled_dot_product_attention", "einsum", "softmax"),
        "attend(q, k, v)", [In("q", "E C B"), K, VV], "E C D",
        lambda q, k, v: sdpa(q, k, v, scale=0.3),
        label="attention written out, all keys (fused)", prelude=ATTEND_ALL),
]

# fused_linear, a product with its epilogue (Note [Products with epilogues]
# in ops/cpu/cpu_epilogue.cpp), and the layers written out that the checker
# runs as it (Note [Layers run as one product] in
# interp/check/fusion_layers.cpp): x [E A B] times w [B D], rows not a
# multiple of the kernel's blocks.
LX, LW, LB = In("x", "E A B"), In("w", "B D"), In("b", "D")
LR = In("r", "E A D")
LIN = In("l", "", model="Linear[B D]")


def gelu_tanh(y):
    return F.gelu(y, approximate="tanh")


ROWS += [
    Row("fused_linear", "fused_linear(x, w)", [LX, LW], "E A D",
        lambda x, w: x @ w),
    Row("fused_linear", "fused_linear(x, w, b, act=\"relu\")", [LX, LW, LB],
        "E A D", lambda x, w, b: torch.relu(x @ w + b)),
    Row("fused_linear", "fused_linear(x, w, b, act=\"gelu\", scale=0.5)",
        [LX, LW, LB], "E A D", lambda x, w, b: F.gelu(0.5 * (x @ w) + b)),
    Row("fused_linear",
        "fused_linear(x, w, act=\"gelu_tanh\", residual=r)", [LX, LW, LR],
        "E A D", lambda x, w, r: gelu_tanh(x @ w) + r),
    Row(("fused_linear", "relu", "matmul", "add"), "relu(x @ w + b)",
        [LX, LW, LB], "E A D", lambda x, w, b: torch.relu(x @ w + b),
        label="relu(x @ w + b) (fused)"),
    Row(("fused_linear", "gelu", "linear"), "gelu(linear(l, x))", [LX, LIN],
        "E A D", lambda x, lin: F.gelu(x @ lin["w"] + lin["b"]),
        label="gelu(linear(l, x)) (fused)"),
    Row(("fused_linear", "linear", "add"), "r + linear(l, x)", [LX, LIN, LR],
        "E A D", lambda x, lin, r: r + (x @ lin["w"] + lin["b"]),
        label="r + linear(l, x) (fused)"),
    Row(("fused_linear", "relu", "matmul", "add", "div"),
        "r + relu((x @ w) / 3.0 + b)", [LX, LW, LB, LR], "E A D",
        lambda x, w, b, r: r + torch.relu((x @ w) / 3.0 + b),
        label="r + relu((x @ w) / 3.0 + b) (fused)"),
]
