# A small ResNet: a stem conv and batch_norm (no bias before a batch_norm,
# as torchvision's: its gradient is rounding noise), a depthwise conv
# (groups = channels, with bias) in a residual branch, and a basic block
# that downsamples: a 3x3 conv with stride 2 and a 3x3 conv, each with
# batch_norm, added to a strided 1x1 shortcut with bias. Every size is in
# the types (Note [Divided dims] in ops/core/divided_dim.h): the padded
# convs keep [b C S S], the strided ones give [b C2 S/2 S/2], so both
# residual sums check; adaptive_avg_pool2d pools to 1x1 before the head.
# SGD with momentum; batch_norm in Train, then in Eval on a held-out batch
# after every step. compare.py runs it beside the same training in
# PyTorch.

devices cpu

dim Ci = 3  # image channels
dim S = 8  # image side
dim C1 = 4
dim C2 = 8
dim K = 3  # classes
dim B = 16
dim STEPS = 30

data Image:
    img: [Ci S S] f64
    label: i64 in 0..K

model Net:
    stem: [C1 Ci 3 3] f64 = normal(std=0.3)
    bn0: BatchNorm[C1] f64
    dw: [C1 1 3 3] f64 = normal(std=0.3)
    dw_b: [C1] f64 = zeros()
    c1: [C2 C1 3 3] f64 = normal(std=0.3)
    bn1: BatchNorm[C2] f64
    c2: [C2 C2 3 3] f64 = normal(std=0.3)
    bn2: BatchNorm[C2] f64
    short: [C2 C1 1 1] f64 = normal(std=0.3)
    short_b: [C2] f64 = zeros()
    head: Linear[C2 K] f64

fn features(mut m: Net, x: [b Ci S S] f64, mode: Mode) -> [b C2 S/2 S/2] f64:
    let h = relu(batch_norm(conv2d(x, m.stem, padding=1), m.bn0, mode))
    h = h + relu(conv2d(h, m.dw, padding=1, groups=C1, bias=m.dw_b))
    let y = relu(batch_norm(conv2d(h, m.c1, stride=2, padding=1), m.bn1, mode))
    y = batch_norm(conv2d(y, m.c2, padding=1), m.bn2, mode)
    return relu(y + conv2d(h, m.short, stride=2, bias=m.short_b))

fn forward(mut m: Net, x: [b Ci S S] f64, mode: Mode) -> [b K] f64:
    let pooled = adaptive_avg_pool2d(features(m, x, mode), 1)
    return linear(m.head, rearrange(pooled, b C 1 1 -> b C))

fn loss(mut m: Net, batch: [b] Image, mode: Mode) -> f64:
    return cross_entropy(forward(m, batch.img, mode), batch.label)

fn train_step(mut m: Net, mut opt: SGD[Net], batch: [b] Image) -> Logs:
    let l, g = value_and_grad(loss, m, batch, Train(seed=0))
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn evaluate(mut m: Net, batch: [b] Image) -> Logs:
    return logs(loss=loss(m, batch, Eval))

fn main():
    let ds = dataset(Image, "data.safetensors")
    let held_out = dataset(Image, "test.safetensors")
    let m = load("init.safetensors", Net)
    let opt = sgd(m, lr=0.05, momentum=0.9)
    let out = jsonl("log.jsonl")
    for batch in ds.batches(B):
        let r = train_step(m, opt, batch)
        let e = mean_logs(evaluate, m, held_out.batches(B))
        out.write(logs(loss=r.loss, grad_norm=r.grad_norm, eval_loss=e.loss))
    save("final.safetensors", m, opt)
