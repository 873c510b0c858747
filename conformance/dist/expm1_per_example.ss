# expm1, the op docs/adding-an-op.md adds by its recipe, runs per example
# across the batch axis (its table row sets no other rule): a loss through
# it, its gradient and its values logged must be the same on one device and
# on several, with an uneven last batch.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w: [D C] = normal(std=0.05)

fn loss(m: Net, batch: [b] Digit) -> f32:
    let h = expm1(batch.img @ m.w)
    return cross_entropy(h, batch.label) + mean(expm1(-batch.img))

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, tiny=sum(expm1(batch.img * 0.000001)))

fn main():
    let data = synthetic_digits(Digit, 101, seed=5)
    let m = Net.init(seed=6)
    let opt = sgd(m, lr=0.1)
    for batch in data.batches(25):
        print(step(m, opt, batch))
    print(float(sum(m.w)))
