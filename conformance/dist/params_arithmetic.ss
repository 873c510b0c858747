# Arithmetic over params (Note [Arithmetic over params] in
# interp/check/exprs.cpp) in worker fns under shard params: RMSprop
# written once over every field with Grads arithmetic (g * g, sqrt),
# an EMA of the model (ema * 0.9 + m * 0.1) and set_params, each on a
# rank's pieces of every param. N devices against one. eps is 1e-3, not
# 1e-8: a pixel that is 0 in every image gives w1 a gradient of rounding
# size, which g / sqrt(sq) would turn into a step of lr either way, so the
# order in which the ranks' sums are added would decide it.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params

dim D = 784
dim H = 32
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w1: [D H] = normal(std=0.05)
    b1: [H] = zeros()
    w2: [H C] = normal(std=0.05)

fn loss(m: Net, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1 + m.b1) @ m.w2, batch.label)

fn step(mut m: Net, mut ema: Net, sq: Grads[Net], batch: [b] Digit) -> Grads[Net]:
    let l, g = value_and_grad(loss, m, batch)
    let sq2 = sq * 0.9 + g * g * 0.1
    set_params(m, m - 0.01 * g / (sqrt(sq2) + 1e-3))
    set_params(ema, ema * 0.9 + m * 0.1)
    return sq2

fn report(m: Net, ema: Net, batch: [b] Digit) -> Logs:
    return logs(loss=loss(m, batch), ema_loss=loss(ema, batch),
                drift=sum((m - ema).w2 ** 2.0))

fn main():
    let data = synthetic_digits(Digit, 40, seed=3)
    let m = Net.init(seed=4)
    let ema = copy(m)
    let sq = zeros_like(m)
    for batch in data.batches(16):
        sq = step(m, ema, sq, batch)
        print(report(m, ema, batch))
