# E0501: a data field's domain must fit its dtype. `img` is declared i64
# (raw pixel counts), but its domain is the float range 0.0..=1.0.
# expect: error E0501 at 10:18

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] i64 in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1) @ m.w2, batch.label)
