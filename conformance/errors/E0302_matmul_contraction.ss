# E0302: `a @ b` contracts a's last axis with b's first; x @ m.w2 contracts
# D (784) with Hd (256). This is errors.md's example: the first layer's
# weights are m.w1. The error is at the whole matmul, from its left operand.
# expect: error E0302 at 21:17

devices cpu

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w2) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)
