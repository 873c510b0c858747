# The README MLP with `shard params` (devices.md item 9): each worker holds
# a piece of every param, of its gradient and of AdamW's exp_avg and
# exp_avg_sq; `x @ m.w1` gathers w1, its gradient is reduce-scattered.
# On cpu, cpu[0 1] and cpu[0 1 2] the logged losses, the evaluation and the
# params read whole in the controller must equal one device's (item 1).
# w1's 50,176 values and w2's 640 are cut into 3 pieces with the last
# padded (16,726 and 214 values), into 2 without padding.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params

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
    return logs(loss=l, grad_norm=norm(g))

fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:
    let logits = forward(m, batch.img)
    return logs(loss=cross_entropy(logits, batch.label),
                acc=mean(argmax(logits, over=C) == batch.label))

fn main():
    let train, test = synthetic_digits(Digit, 700, seed=3).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3, weight_decay=0.01)
    let out = stdout()
    for batch in train.batches(64, shuffle=1):
        out.write(train_step(m, opt, batch))
    print(mean_logs(evaluate, m, test.batches(32)))
    # Read in the controller: gathered whole from the pieces.
    print(float(sum(m.w1)), float(sum(m.w2 * m.w2)), opt.step)
