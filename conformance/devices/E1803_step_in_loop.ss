# Device work in a fn that runs in the controller (docs/errors/E1803.md).
# devices: cpu[0 1 2]
# expect: error E1803 at 28:20
# expect: error E1803 at 29:9

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

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn run(train: Dataset[Digit], mut m: Mlp, mut opt: AdamW[Mlp], out: Sink):
    for batch in train.batches(64, shuffle=0):
        let l, g = value_and_grad(loss, m, batch)
        update(m, opt, g)
        out.write(logs(loss=l))

fn main():
    let train = synthetic_digits(Digit, 6400, seed=0)
    let m = Mlp.init(seed=0)
    run(train, m, adamw(m, lr=1e-3), stdout())
