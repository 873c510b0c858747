# E0309: value_and_grad's fn must return a 0-d *float*. The number of
# correct predictions is 0-d, but i64: it is a step function of the
# weights, with no gradient. Differentiate the loss, and log the count.
# expect: error E0309 at 27:31

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

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn correct(m: Mlp, batch: [b] Digit) -> i64:
    return sum(argmax(forward(m, batch.img), over=C) == batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let n, g = value_and_grad(correct, m, batch)
    update(m, opt, g)
    return logs(correct=n)
