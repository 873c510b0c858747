# Deterministic mode (Note [Deterministic mode] in
# interp/devices/lower/chunks.h): the README MLP gives one device's bits on
# 1, 2, 3 and 5 devices, compared with no tolerance: the logged losses,
# the csv sink byte for byte, the checkpoint and the final params. 900
# examples in batches of 64 end with a batch of 4 (one chunk, on the
# first device: the others hold no rows); batches of 60 divide them; the
# test batches of 32 end with 4.
# expect: ok
# devices: cpu
# devices: cpu[0 1]
# devices: cpu[0 1 2]
# devices: cpu[0 1 2 3 4]

devices cpu
    deterministic

dim D = 784
dim Hd = 64
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    b1: [Hd] = zeros()
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1 + m.b1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:
    let logits = forward(m, batch.img)
    return logs(loss=cross_entropy(logits, batch.label),
                acc=mean(argmax(logits, over=C) == batch.label))

fn main():
    let train, test = synthetic_digits(Digit, 1000, seed=0).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let log = csv("train.csv")
    for batch in train.batches(64, shuffle=1):
        log.write(train_step(m, opt, batch))
    for batch in train.batches(60, shuffle=2):
        log.write(train_step(m, opt, batch))
    save("mlp.safetensors", m, opt)
    print(mean_logs(evaluate, m, test.batches(32)))
    print(float(sum(m.w1)), float(sum(m.w2 * m.w2)), float(sum(m.b1)))
