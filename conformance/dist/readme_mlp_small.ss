# The README MLP, shortened: on cpu, cpu[0 1] and cpu[0 1 2] the logged
# losses and the final evaluation must equal one device's (devices.md 1).
# 900 training examples in batches of 64 end with a batch of 4 (2/1/1 on
# three devices); the test batches of 32 end with 4 as well.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim Hd = 64
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
    let out = stdout()
    for batch in train.batches(64, shuffle=1):
        out.write(train_step(m, opt, batch))
    print(mean_logs(evaluate, m, test.batches(32)))
    print(float(sum(m.w1)), float(sum(m.w2 * m.w2)))
