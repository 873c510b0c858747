# The fix: index another axis (the first class's logit of each example).
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

# The first class's logit of each example.
fn first_logits(m: Mlp, batch: [b] Digit) -> [b]:
    return forward(m, batch.img)[:, 0]
