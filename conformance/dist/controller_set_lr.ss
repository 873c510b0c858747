# set_lr in the controller (main) on several devices must reach the
# workers' optimizer (issue 10 item 2): a warm-up from lr 0 with a cosine
# schedule trains exactly as on one device. The losses, opt.lr and opt.step
# read in the controller after each step, and the final params are
# compared with cpu's. (ss conformance runs ranks as threads, with main on
# every rank; interp/tests/controller_state_test.cpp runs the same path
# through ss run's controller and worker processes.)
# expect: ok
# tolerance: 1e-5

dim D = 784
dim Hd = 16
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

fn main():
    let data = synthetic_digits(Digit, 64, seed=3)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=0.0)
    let out = stdout()
    let i = 0
    for batch in data.batches(16, shuffle=1):
        set_lr(opt, cosine_lr(i, 4, 0.01, warmup=2))
        out.write(train_step(m, opt, batch))
        print(opt.lr, opt.step)
        i = i + 1
    print(float(sum(m.w1 * m.w1)), float(sum(m.w2)))
