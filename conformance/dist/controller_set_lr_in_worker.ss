# set_lr inside a worker fn changes the workers' optimizer; the controller
# must then read the new lr (opt.lr), save it in the checkpoint's metadata
# and load it back, as on one device.
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

fn warm_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit, lr: float) -> Logs:
    set_lr(opt, lr)
    return train_step(m, opt, batch)

fn main():
    let data = synthetic_digits(Digit, 64, seed=3)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1.0)
    let i = 0
    for batch in data.batches(16):
        print(warm_step(m, opt, batch, cosine_lr(i, 4, 0.01, warmup=2)))
        print(opt.lr, opt.step)
        i = i + 1
    save("controller_set_lr_in_worker.safetensors", m, opt)
    # A step between save and load: its all-reduce orders every rank's
    # load after rank 0's save when ranks run as threads.
    for batch in data.batches(64):
        train_step(m, opt, batch)
    let m2, o2 = load("controller_set_lr_in_worker.safetensors", Mlp, adamw)
    print(o2.lr, o2.step, float(sum(m2.w2)))
    for batch in data.batches(32):
        print(train_step(m2, o2, batch))
    print(o2.lr, o2.step, float(sum(m2.w1 * m2.w1)))
