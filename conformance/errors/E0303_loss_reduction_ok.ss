# The fix of E0303_loss_reduction.ss: reduction="mean" (torch's default,
# the sum over the kept labels' weights), or "none" for each example's loss
# to weigh by hand.
# expect: ok

dim D = 4
dim C = 3

fn loss(h: [b C], y: [b] i64) -> f32:
    let w = to(arange(C), f32) + 1.0
    return cross_entropy(h, y, weight=w, reduction="mean")

fn each(h: [b C], y: [b] i64) -> [b]:
    return cross_entropy(h, y, reduction="none")
