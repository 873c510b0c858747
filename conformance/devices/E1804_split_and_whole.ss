# A fn called with a split value and a whole one (docs/errors/E1804.md).
# devices: cpu[0 1 2]
# expect: error E1804 at 27:23

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

# A sanity check: the logits of an all-black image.
fn blank_logits(m: Mlp) -> [1 C]:
    return forward(m, zeros([1 D]))

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let train = synthetic_digits(Digit, 6400, seed=0)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let out = stdout()
    for batch in train.batches(64, shuffle=0):
        out.write(train_step(m, opt, batch))
