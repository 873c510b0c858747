# E0305: a named argument that the fn does not have: adamw's weight decay
# is `weight_decay=`.
# expect: error E0305 at 27:33

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

fn main():
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3, wd=0.1)
    let out = stdout()
    for batch in synthetic_digits(Digit, 1000, seed=0).batches(64):
        out.write(train_step(m, opt, batch))
