# The fix for E0102_inconsistent_dedent: `out.write` lines up with the
# `for` body it belongs to.
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

fn main():
    let m = Mlp.init(seed=0)
    let out = stdout()
    for batch in synthetic_digits(Digit, 256, seed=0).batches(64):
        let l = loss(m, batch)
        out.write(logs(loss=l))
