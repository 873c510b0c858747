# Gradients the workers computed, accumulated across calls, made in the
# controller (zeros_like(m) of a model the workers hold and have trained,
# zeros_like(g)), scaled there (g * 0.25) and applied by a worker fn: each
# travels as a new value, as on one device.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim Hd = 16
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn grads_of(m: Mlp, batch: [b] Digit) -> Grads[Mlp]:
    let l, g = value_and_grad(loss, m, batch)
    return g

fn add_grads(acc: Grads[Mlp], g: Grads[Mlp]) -> Grads[Mlp]:
    return acc + g

fn apply(mut m: Mlp, mut opt: AdamW[Mlp], g: Grads[Mlp]):
    update(m, opt, g)

fn main():
    let data = synthetic_digits(Digit, 64, seed=3)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=0.01)
    for batch in data.batches(32):
        train_step(m, opt, batch)
    # A zero Grads of the model the workers have trained, made here.
    let acc = zeros_like(m)
    print(acc, float(sum(acc.w2 * acc.w2)))
    for batch in data.batches(16):
        acc = add_grads(acc, grads_of(m, batch))
    print(float(sum(acc.w2 * acc.w2)))
    apply(m, opt, acc * 0.25 + zeros_like(acc))
    print(float(sum(m.w1 * m.w1)), float(sum(m.w2)), opt.step)
