"""Torch rows of the losses (ops/defs/losses.cpp): each option torch's
functional form takes, forward and VJP, against torch.nn.functional."""

import numpy as np
import torch
import torch.nn.functional as F

from op_row import In, Row

# [E A C] logits (2 x 3 positions, 5 classes) and their labels, a third of
# them -100 (torch's default ignore_index); the first kept, so that the
# mean has a denominator.


def _labels(ignored, share=0.35):
    def draw(r, s):
        y = r.integers(0, 5, s)
        y[r.random(s) < share] = ignored
        y.flat[0] = 1
        return y
    return draw


Z = In("z", "E A C", lo=-3, hi=3)
Y = In("y", "E A", "i64", values=_labels(-100))
Y2 = In("y", "E A", "i64", values=_labels(2))
W = In("w", "C", lo=0.5, hi=2.0, grad=False)


def _t(z):
    """[E A C] -> torch's [E C A]: the class axis second."""
    return z.permute(0, 2, 1)


ROWS = [
    Row("cross_entropy", "cross_entropy(z, y)", [Z, Y], "",
        lambda z, y: F.cross_entropy(_t(z), y),
        label="cross_entropy ignores -100 by default"),
    Row("cross_entropy", "cross_entropy(z, y, ignore_index=2)", [Z, Y2], "",
        lambda z, y: F.cross_entropy(_t(z), y, ignore_index=2)),
    Row("cross_entropy", "cross_entropy(z, y, weight=w)", [Z, Y, W], "",
        lambda z, y, w: F.cross_entropy(_t(z), y, weight=w)),
    Row("cross_entropy", "cross_entropy(z, y, label_smoothing=0.1)", [Z, Y],
        "", lambda z, y: F.cross_entropy(_t(z), y, label_smoothing=0.1)),
    Row("cross_entropy",
        "cross_entropy(z, y, weight=w, ignore_index=2, label_smoothing=0.2)",
        [Z, Y2, W], "", lambda z, y, w: F.cross_entropy(
            _t(z), y, weight=w, ignore_index=2, label_smoothing=0.2)),
    Row("cross_entropy", "cross_entropy(z, y, reduction=\"sum\")", [Z, Y], "",
        lambda z, y: F.cross_entropy(_t(z), y, reduction="sum")),
    Row("cross_entropy",
        "cross_entropy(z, y, weight=w, label_smoothing=0.1, "
        "reduction=\"none\")", [Z, Y, W], "E A",
        lambda z, y, w: F.cross_entropy(_t(z), y, weight=w,
                                        label_smoothing=0.1,
                                        reduction="none")),
    Row("cross_entropy",
        "cross_entropy(z, softmax(p, over=C), weight=w, label_smoothing=0.1)",
        [In("z", "A C", lo=-3, hi=3), In("p", "A C", grad=False), W], "",
        lambda z, p, w: F.cross_entropy(z, torch.softmax(p, 1), weight=w,
                                        label_smoothing=0.1),
        label="cross_entropy probabilities weight smoothing"),
    Row("nll_loss", "nll_loss(log_softmax(z, over=C), y)", [Z, Y], "",
        lambda z, y: F.nll_loss(_t(torch.log_softmax(z, 2)), y)),
    Row("nll_loss", "nll_loss(z, y, weight=w, ignore_index=2)", [Z, Y2, W],
        "", lambda z, y, w: F.nll_loss(_t(z), y, weight=w, ignore_index=2)),
    Row("nll_loss", "nll_loss(z, y, reduction=\"none\")", [Z, Y], "E A",
        lambda z, y: F.nll_loss(_t(z), y, reduction="none")),
]

P = In("p", "A B", lo=0.05, hi=0.95)
T = In("t", "A B", lo=0.0, hi=1.0)
X = In("x", "A B", lo=-4, hi=4)
WB = In("w", "B", lo=0.5, hi=2.0, grad=False)
ROWS += [
    Row("binary_cross_entropy", "binary_cross_entropy(p, t)", [P, T], "",
        F.binary_cross_entropy),
    Row("binary_cross_entropy",
        "binary_cross_entropy(p, t, weight=w, reduction=\"sum\")",
        [P, T, WB], "", lambda p, t, w: F.binary_cross_entropy(
            p, t, weight=w, reduction="sum")),
    Row("binary_cross_entropy", "binary_cross_entropy(p, t, reduction=\"none\")",
        [P, T], "A B",
        lambda p, t: F.binary_cross_entropy(p, t, reduction="none")),
    # p of exactly 0 and 1: torch clamps each log at -100.
    Row("binary_cross_entropy", "binary_cross_entropy(p, t)",
        [In("p", "A B", grad=False, values=lambda r, s: r.integers(
            0, 2, s).astype(float)), T], "", F.binary_cross_entropy,
        label="binary_cross_entropy p of 0 and 1"),
    Row("binary_cross_entropy_with_logits",
        "binary_cross_entropy_with_logits(x, t)", [X, T], "",
        F.binary_cross_entropy_with_logits),
    Row("binary_cross_entropy_with_logits",
        "binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw)",
        [X, T, WB, In("pw", "B", lo=0.5, hi=3.0, grad=False)], "",
        lambda x, t, w, pw: F.binary_cross_entropy_with_logits(
            x, t, weight=w, pos_weight=pw)),
    Row("binary_cross_entropy_with_logits",
        "binary_cross_entropy_with_logits(x, t, reduction=\"none\")",
        [In("x", "A B", lo=-60, hi=60), T], "A B",
        lambda x, t: F.binary_cross_entropy_with_logits(
            x, t, reduction="none"),
        label="binary_cross_entropy_with_logits large logits none"),
]

A, B = In("a", "A B"), In("b", "A B")
ROWS += [
    Row("mse", "mse(a, b, reduction=\"sum\")", [A, In("b", "B")], "",
        lambda a, b: F.mse_loss(a, b.expand(3, 4), reduction="sum")),
    Row("mse", "mse(a, b, reduction=\"none\")", [A, B], "A B",
        lambda a, b: F.mse_loss(a, b, reduction="none")),
    Row("smooth_l1", "smooth_l1(a, b)", [A, B], "", F.smooth_l1_loss),
    Row("smooth_l1", "smooth_l1(a, b, beta=0.5, reduction=\"sum\")", [A, B],
        "", lambda a, b: F.smooth_l1_loss(a, b, beta=0.5, reduction="sum")),
    Row("smooth_l1", "smooth_l1(a, b, beta=0.0)", [A, B], "",
        lambda a, b: F.smooth_l1_loss(a, b, beta=0.0),
        label="smooth_l1 beta 0 is l1"),
    Row("huber", "huber(a, b)", [A, B], "", F.huber_loss),
    Row("huber", "huber(a, b, delta=0.5, reduction=\"none\")", [A, B], "A B",
        lambda a, b: F.huber_loss(a, b, delta=0.5, reduction="none")),
]

LQ = In("q", "A B", lo=0.05, hi=1.0)
ROWS += [
    Row("kl_div", "kl_div(log_softmax(x, over=B), q)", [X, LQ], "",
        lambda x, q: F.kl_div(torch.log_softmax(x, 1), q)),
    Row("kl_div", "kl_div(log_softmax(x, over=B), q, reduction=\"batchmean\")",
        [X, LQ], "", lambda x, q: F.kl_div(torch.log_softmax(x, 1), q,
                                           reduction="batchmean")),
    Row("kl_div", "kl_div(x, q, reduction=\"none\", log_target=true)",
        [X, In("q", "A B")], "A B",
        lambda x, q: F.kl_div(x, q, reduction="none", log_target=True)),
    # Zeros in the target: 0 · log 0 is 0 (xlogy), in the value and in the
    # input's gradient. The target's own gradient is not compared: at a
    # zero target d(t log t)/dt is -inf, which torch gives as NaN.
    Row("kl_div", "kl_div(x, q, reduction=\"sum\")",
        [X, In("q", "A B", grad=False, values=lambda r, s: np.where(
            r.random(s) < 0.4, 0.0, r.uniform(0.1, 1, s)))], "",
        lambda x, q: F.kl_div(x, q, reduction="sum"),
        label="kl_div zero targets"),
    # Negative and NaN targets: NaN, as torch's xlogy(t, t) (the runtime
    # fuzzer's oracle: the op gave -t x, ref/ 0).
    Row("kl_div", "kl_div(x, q, reduction=\"none\")",
        [X, In("q", "A B", grad=False, values=lambda r, s: r.choice(
            [-1.0, 0.0, 0.5, np.nan], s))], "A B",
        lambda x, q: F.kl_div(x, q, reduction="none"), grad=False,
        label="kl_div negative and NaN targets"),
    Row("one_hot", "one_hot(y, C)", [In("y", "E A", "i64", 0, 5)], "E A C",
        lambda y: F.one_hot(y, 5)),
]
