# Every reduction lowered across the batch axis (sum, mean, cross_entropy,
# mse, batch_norm, reduce(with=sum)) logged on its own and inside a
# differentiated loss, with dropout keyed by each element's index in the
# whole batch, and a batch of 1 (one device holds it, the others nothing).
# expect: ok
# tolerance: 1e-5

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w: [D C] = normal(std=0.05)
    bn: BatchNorm[C]

fn loss(mut m: Net, batch: [b] Digit, mode: Mode) -> f32:
    let h = batch_norm(dropout(batch.img, 0.25, mode) @ m.w, m.bn, mode)
    let centred = h - mean(h, over=b)
    return cross_entropy(centred, batch.label) + mse(h, h * 0.5) + sum(h * h) / 1000.0

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit, mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, batch, mode)
    update(m, opt, g)
    return logs(loss=l, total=reduce(batch.img, over=(b, D), with=sum),
                pixels=mean(batch.img), labels=sum(batch.label),
                rm=sum(m.bn.running_mean), rv=sum(m.bn.running_var))

fn stats(m: Net, batch: [b] Digit) -> Logs:
    let h = batch.img @ m.w
    return logs(ce=cross_entropy(h, batch.label), mse=mse(h, h * 0.9),
                mean_c=mean(h, over=(b, C)), sum_b=sum(h, over=b))

fn main():
    let data = synthetic_digits(Digit, 203, seed=2)
    let m = Net.init(seed=3)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    let k = 0
    for batch in data.batches(50, shuffle=4):
        print(step(m, opt, batch, Train(seed=k)))
        k += 1
    for batch in data.take(1).batches(1):
        print(stats(m, batch))
    print(float(sum(m.w)), float(sum(m.bn.g)), float(sum(m.bn.b)))
