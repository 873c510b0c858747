# E0201: a type name that is not a dtype, record, model or builtin type
# (`Digits` for the record `Digit`).
# expect: error E0201 at 19:28

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C] = relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digits) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)
