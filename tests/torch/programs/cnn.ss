# A CNN: conv2d (no bias: batch_norm's mean would remove it), batch_norm
# (Train while training, Eval on the held-out batch after every step),
# relu, max_pool2d, a linear head; SGD with momentum, nesterov and weight
# decay, the lr set by cosine_lr every step. compare.py runs it beside the
# same training in PyTorch.

devices cpu

dim Ci = 2  # input channels
dim S = 8  # image side
dim Co = 4  # conv channels
dim C = 3  # classes
dim B = 16
dim STEPS = 40

data Image:
    img: [Ci S S] f64
    label: i64 in 0..C

model Cnn:
    k: [Co Ci 3 3] f64 = normal(std=0.3)
    bn: BatchNorm[Co] f64
    w: [(Co S/2 S/2) C] f64 = normal(std=0.1)
    b: [C] f64 = zeros()

fn forward(mut m: Cnn, x: [b Ci S S] f64, mode: Mode) -> [b C] f64:
    let h = conv2d(x, m.k, padding=1)
    let p = max_pool2d(relu(batch_norm(h, m.bn, mode)), 2)
    return rearrange(p, b Co ph pw -> b (Co ph pw)) @ m.w + m.b

fn loss(mut m: Cnn, batch: [b] Image, mode: Mode) -> f64:
    return cross_entropy(forward(m, batch.img, mode), batch.label)

# set_lr here, in a worker fn on several devices (mlp.ss calls it in main,
# in the controller): the saved metadata's lr is the one set last.
fn train_step(mut m: Cnn, mut opt: SGD[Cnn], batch: [b] Image, lr: float) -> Logs:
    set_lr(opt, lr)
    let l, g = value_and_grad(loss, m, batch, Train(seed=0))
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn evaluate(mut m: Cnn, batch: [b] Image) -> Logs:
    return logs(loss=loss(m, batch, Eval))

fn main():
    let ds = dataset(Image, "data.safetensors")
    let held_out = dataset(Image, "test.safetensors")
    let m = load("init.safetensors", Cnn)
    let opt = sgd(m, lr=0.1, momentum=0.9, weight_decay=1e-3, nesterov=true)
    let out = jsonl("log.jsonl")
    let step = 0
    for batch in ds.batches(B):
        let lr = cosine_lr(step, STEPS, 0.1)
        let r = train_step(m, opt, batch, lr)
        let e = mean_logs(evaluate, m, held_out.batches(B))
        out.write(logs(loss=r.loss, grad_norm=r.grad_norm, lr=lr, eval_loss=e.loss),
                  step=step)
        step += 1
    save("final.safetensors", m, opt)
