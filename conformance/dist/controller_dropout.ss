# Dropout in the controller (main) with a Train mode that worker fns also
# draw from: draws are keyed by the mode's entry count and the draw's
# ordinal in the entry (language.md, Randomness), so main's draw after a
# step goes on from the workers' draws in it, as on one device (before,
# the controller started main's draws from 0: other masks). One loop
# writes its steps to a sink, so they are sent ahead of their results.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim Hd = 16
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=0.05)
    w2: [Hd C] = normal(std=0.2)

fn forward(m: Mlp, x: [b D], mode: Mode) -> [b C]:
    return dropout(relu(x @ m.w1), 0.5, mode) @ m.w2

fn loss(m: Mlp, batch: [b] Digit, mode: Mode) -> f32:
    return cross_entropy(forward(m, batch.img, mode), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit, mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, batch, mode)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let data = synthetic_digits(Digit, 64, seed=3)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=0.01)
    let mode = Train(seed=7)
    for batch in data.batches(16):
        print(train_step(m, opt, batch, mode))
        print(dropout(ones([3, 4]), 0.5, mode))
    let out = stdout()
    for batch in data.batches(32):
        out.write(train_step(m, opt, batch, mode))
        print(dropout(ones([2, 3]), 0.5, mode))
    print(float(sum(m.w1 * m.w1)), float(sum(m.w2)))
