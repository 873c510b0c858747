# With `split H` every device has the whole batch (devices.md item 9): the
# workers load every row of each batch of the dataset, nothing is lowered
# across the batch axis, and an op along it (softmax over b, which is
# E1801 with the batch split) is allowed and runs as on one device. The
# hidden layer [b (H Dh)] is split by heads: w1's columns and w2's rows
# (a Linear[(H Dh) C]), its bias too; `@` over (H Dh) all-reduces.
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim D = 784
dim H = 6
dim Dh = 4
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w1: [D (H Dh)] = normal(std=1 / sqrt(D))
    b1: [(H Dh)] = zeros()
    out: Linear[(H Dh) C]

fn logits(m: Net, x: [b D]) -> [b C]:
    return linear(m.out, relu(x @ m.w1 + m.b1))

fn loss(m: Net, batch: [b] Digit) -> f32:
    let z = logits(m, batch.img)
    # Each example weighted by its share of the batch's softmax.
    let w = softmax(mean(z, over=C), over=b)
    return cross_entropy(z, batch.label) + sum(w * w)

fn step(mut m: Net, mut opt: AdamW[Net], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn main():
    let data = synthetic_digits(Digit, 150, seed=4)
    let m = Net.init(seed=2)
    let opt = adamw(m, lr=1e-2)
    let out = stdout()
    for batch in data.batches(40, shuffle=1):
        out.write(step(m, opt, batch))
    print(float(sum(m.w1 * m.w1)), float(sum(m.out.w)), float(sum(m.b1)))
