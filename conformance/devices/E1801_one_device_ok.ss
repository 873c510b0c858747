# The program of E1801_max_over_batch.ss on one device: nothing is split,
# so nothing is reported.
# devices: cpu
# expect: ok

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
    return relu(x @ m.w1) @ m.w2

# Scale the inputs by the largest pixel value in the batch.
fn loss(m: Mlp, batch: [b] Digit) -> f32:
    let x = batch.img / max(batch.img, over=b)
    return cross_entropy(forward(m, x), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)
