# A tensor condition computed from split data (language.md: read on the
# host, with several devices E1801).
# devices: cpu[0 1 2]
# expect: error E1801 at 26:8

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

# Skip the step when the batch's loss is large.
fn guarded_loss(m: Mlp, batch: [b] Digit) -> f32:
    let l = cross_entropy(forward(m, batch.img), batch.label)
    if l > 10.0:
        return 0.0 * l
    return l
