# An MLP with biases, layer_norm and gelu, trained with AdamW (weight decay),
# clip_norm and a warm-up + cosine schedule through set_lr, from the params
# in init.safetensors on the data in data.safetensors. compare.py runs it
# beside the same training in PyTorch, in f64 as written and in f32.

devices cpu

dim D = 16
dim H = 32
dim C = 4
dim B = 16
dim STEPS = 40
dim WARMUP = 5

data Example:
    x: [D] f64
    y: i64 in 0..C

model Mlp:
    l1: Linear[D H] f64
    norm: LayerNorm[H] f64
    l2: Linear[H C] f64

# Generic over its dtype (Note [Dtype variables]): the f64 and the f32 runs
# each check and run their instance.
fn normed(l: Linear[I O] T, n: LayerNorm[O] T, x: [b I] T) -> [b O] T:
    return layer_norm(linear(l, x), over=O, affine=n)

fn forward(m: Mlp, x: [b D] f64) -> [b C] f64:
    return linear(m.l2, gelu(normed(m.l1, m.norm, x)))

fn loss(m: Mlp, batch: [b] Example) -> f64:
    return cross_entropy(forward(m, batch.x), batch.y)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Example) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    let gn = norm(g)
    update(m, opt, clip_norm(g, 1.0))
    return logs(loss=l, grad_norm=gn)

fn main():
    let ds = dataset(Example, "data.safetensors")
    let m = load("init.safetensors", Mlp)
    let opt = adamw(m, lr=0.02, betas=(0.9, 0.99), weight_decay=0.05)
    let out = jsonl("log.jsonl")
    let step = 0
    for batch in ds.batches(B):
        let lr = cosine_lr(step, STEPS, 0.02, warmup=WARMUP)
        set_lr(opt, lr)
        let r = train_step(m, opt, batch)
        out.write(logs(loss=r.loss, grad_norm=r.grad_norm, lr=lr), step=step)
        step += 1
    save("final.safetensors", m, opt)
