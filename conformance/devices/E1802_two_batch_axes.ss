# A value with two batch axes, [b b].
# devices: cpu[0 1 2]
# expect: error E1802 at 24:12

devices cpu[0 1 2]

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
    return relu(x @ m.w1) @ m.w2

# The distances between the examples of the batch: two batch axes.
fn gram(batch: [b] Digit) -> [b b]:
    return batch.img @ rearrange(batch.img, b D -> D b)
