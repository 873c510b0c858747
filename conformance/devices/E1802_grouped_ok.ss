# The fix: the batch axis stays an axis of its own.
# devices: cpu[0 1 2]
# expect: ok

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

dim P = 16
dim Q = 49

# Every patch of every example, the batch axis kept apart.
fn patches(batch: [b] Digit) -> [b P Q]:
    return rearrange(batch.img, b (P Q) -> b P Q)
