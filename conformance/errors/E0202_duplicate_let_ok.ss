# The fix for E0202_duplicate_let: the hidden value is rebound with `=` (same
# shape and dtype), before it is used.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D], mode: Mode) -> [b C]:
    let h = relu(x @ m.w1)
    h = dropout(h, 0.1, mode)
    let out = h @ m.w2
    return out
