# copy(m) in the controller of a model the workers have trained: the copy
# starts from the trained values and is trained alone (its own optimizer),
# while the original stays as it was until it is trained again.
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

fn main():
    let data = synthetic_digits(Digit, 64, seed=3)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=0.01)
    for batch in data.batches(32):
        train_step(m, opt, batch)
    let t = copy(m)
    let topt = adamw(t, lr=0.05)
    print(float(sum(t.w2)), float(sum(m.w2)))
    for batch in data.batches(16):
        print(train_step(t, topt, batch))
    print(float(sum(t.w2)), float(sum(m.w2)))
    for batch in data.batches(16):
        print(train_step(m, opt, batch))
    print(float(sum(t.w1 * t.w1)), float(sum(m.w1 * m.w1)), opt.step, topt.step)
