# E0303: a loss's reduction= is "mean", "sum" or "none" (torch's names),
# written as a string literal: the result's type depends on it ([b] for
# "none", 0-d otherwise). "avg" is none of them; the error is at the
# argument and lists the three.
# expect: error E0303 at 12:52

dim D = 4
dim C = 3

fn loss(h: [b C], y: [b] i64) -> f32:
    let w = to(arange(C), f32) + 1.0
    return cross_entropy(h, y, weight=w, reduction="avg")
