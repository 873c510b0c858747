# `shard params` with SGD (momentum, weight decay) and checkpoints
# (devices.md item 9): the momentum buffers are pieces like the params;
# clip_norm and norm all-reduce one number, the squares of each worker's
# pieces; `save` writes the file one device writes (compared with it), and
# `load` makes a model and optimizer that the workers cut again, which
# train on as the saved ones would. Stdlib Linear layers: their biases
# (12 and 10 values) are short: on 3 workers l2.b is cut 4, 4 and 2 + 2
# zeros of padding.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params

dim D = 784
dim H = 12
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    l1: Linear[D H]
    l2: Linear[H C]

fn loss(m: Net, batch: [b] Digit) -> f32:
    return cross_entropy(linear(m.l2, tanh(linear(m.l1, batch.img))), batch.label)

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, clip_norm(g, 0.5))
    return logs(loss=l, grad_norm=norm(g))

fn main():
    let data = synthetic_digits(Digit, 200, seed=5)
    let m = Net.init(seed=1)
    let opt = sgd(m, lr=0.3, momentum=0.9, weight_decay=0.01)
    let out = stdout()
    for batch in data.batches(40):
        out.write(step(m, opt, batch))
    save("half.safetensors", m, opt)
    let m2, opt2 = load("half.safetensors", Net, sgd)
    for batch in data.batches(40, shuffle=2):
        out.write(step(m2, opt2, batch))
    print(float(sum(m2.l1.w)), float(sum(m2.l2.b)), opt2.step)
    save("final.safetensors", m2, opt2)
