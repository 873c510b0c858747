# Deterministic mode with batch_norm: its statistics are a payload per
# chunk, folded in the chunks' tree; the running statistics take one step
# per batch, not one per chunk; then Eval mode normalises each example by
# them. Dropout, SGD with momentum. One device's bits on 1, 2, 3 and 5
# devices; a last batch of 3 examples.
# expect: ok
# devices: cpu
# devices: cpu[0 1]
# devices: cpu[0 1 2]
# devices: cpu[0 1 2 3 4]

devices cpu
    deterministic

dim D = 784
dim H = 32
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w1: [D H] = normal(std=0.05)
    bn: BatchNorm[H]
    w2: [H C] = normal(std=0.1)

fn forward(mut m: Net, x: [b D], mode: Mode) -> [b C]:
    let h = batch_norm(dropout(x, 0.2, mode) @ m.w1, m.bn, mode)
    return relu(h) @ m.w2

fn loss(mut m: Net, batch: [b] Digit, mode: Mode) -> f32:
    return cross_entropy(forward(m, batch.img, mode), batch.label)

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit, mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, batch, mode)
    update(m, opt, g)
    return logs(loss=l)

fn evaluate(mut m: Net, batch: [b] Digit) -> Logs:
    return logs(loss=cross_entropy(forward(m, batch.img, Eval), batch.label))

fn main():
    let data = synthetic_digits(Digit, 163, seed=7)
    let m = Net.init(seed=2)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    let out = stdout()
    let k = 0
    for batch in data.batches(40, shuffle=1):
        out.write(step(m, opt, batch, Train(seed=k)))
        k += 1
    print(mean_logs(evaluate, m, data.batches(50)))
    print(float(sum(m.bn.running_mean)), float(sum(m.bn.running_var)))
