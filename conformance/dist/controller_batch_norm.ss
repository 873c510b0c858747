# batch_norm in Train mode called in the controller (main) updates the
# running statistics of a model the workers hold and have trained; the
# next call must send the new buffers, as on one device.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim Hd = 8
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w1: [D Hd] = normal(std=0.05)
    bn: BatchNorm[Hd]
    w2: [Hd C] = normal(std=0.2)

fn forward(mut m: Net, x: [b D], mode: Mode) -> [b C]:
    return relu(batch_norm(x @ m.w1, m.bn, mode)) @ m.w2

fn loss(mut m: Net, batch: [b] Digit, mode: Mode) -> f32:
    return cross_entropy(forward(m, batch.img, mode), batch.label)

fn train_step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit, mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, batch, mode)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let data = synthetic_digits(Digit, 40, seed=3)
    let m = Net.init(seed=0)
    let opt = sgd(m, lr=0.1)
    let mode = Train(seed=1)
    for batch in data.batches(10):
        print(train_step(m, opt, batch, mode))
    print(float(sum(m.bn.running_mean)), float(sum(m.bn.running_var)))
    let h = ones([4, Hd]) * tensor([[1.0], [2.0], [3.0], [5.0]])
    print(float(sum(batch_norm(h, m.bn, mode))))
    print(float(sum(m.bn.running_mean)), float(sum(m.bn.running_var)))
    for batch in data.batches(10):
        print(train_step(m, opt, batch, mode))
    print(float(sum(m.bn.running_mean)), float(sum(m.bn.running_var)), float(sum(m.w2)))
