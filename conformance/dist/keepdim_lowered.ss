# keepdim=true across the batch axis (Note [keepdim] in
# ops/defs/reductions.cpp): mean(h, over=b, keepdim=true) is [1 C], and
# h - it broadcasts back to [b C], as a batch norm's statistics do; its
# lowering all-reduces the sum and count and reshapes the mean. Inside a
# differentiated loss and logged, on uneven batches (23 in tens: a last
# batch of 3). sum's keepdim over b too.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w: [D C] = normal(std=0.05)

fn centred(m: Net, batch: [b] Digit) -> [b C]:
    let h = batch.img @ m.w
    return h - mean(h, over=b, keepdim=true)

fn loss(m: Net, batch: [b] Digit) -> f32:
    let c = centred(m, batch)
    return cross_entropy(c, batch.label) + sum(sum(c * c, over=b,
                                                   keepdim=true)) / 1000.0

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, spread=sum(max(centred(m, batch), over=C, keepdim=true)))

fn main():
    let data = synthetic_digits(Digit, 23, seed=5)
    let m = Net.init(seed=6)
    let opt = sgd(m, lr=0.1)
    for batch in data.batches(10):
        print(step(m, opt, batch))
