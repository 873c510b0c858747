# The fix: each example scaled by its own largest value (over D).
# No fn main: several devices are checked, not run, by this suite.
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

# Scale each example by its own largest pixel value.
fn loss(m: Mlp, batch: [b] Digit) -> f32:
    let peak = max(batch.img, over=D)
    let x = batch.img / rearrange(peak, b -> b 1)
    return cross_entropy(forward(m, x), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)
