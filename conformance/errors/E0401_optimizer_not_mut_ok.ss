# The fix for E0401_optimizer_not_mut: schedule declares `mut opt`.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1) @ m.w2, batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn schedule(mut opt: AdamW[Mlp], step: int, total: int):
    set_lr(opt, cosine_lr(step, total, 1e-3, warmup=100))

fn main():
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let out = stdout()
    let step = 0
    for batch in synthetic_digits(Digit, 6400, seed=0).batches(64):
        schedule(opt, step, 100)
        out.write(train_step(m, opt, batch), step=step)
        step += 1
