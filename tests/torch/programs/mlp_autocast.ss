# mlp.ss's MLP (without its layer_norm) trained in bf16 mixed precision:
# the loss runs under autocast(loss, bf16), as torch.autocast("cpu",
# dtype=torch.bfloat16) runs it (Note [Autocast] in
# interp/eval/autocast.cpp): both linear layers in bf16, gelu in bf16 on
# their bf16 output, cross_entropy in f32; the params, their gradients and
# AdamW's state stay f32 (the master weights). compare.py runs it beside
# torch's autocast, f32 only (bf16 tolerances: torch_programs.py).

devices cpu

dim D = 16
dim H = 32
dim C = 4
dim B = 16
dim STEPS = 50
dim WARMUP = 5

data Example:
    x: [D]
    y: i64 in 0..C

model Mlp:
    l1: Linear[D H]
    l2: Linear[H C]

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return linear(m.l2, gelu(linear(m.l1, x)))

fn loss(m: Mlp, batch: [b] Example) -> f32:
    return cross_entropy(forward(m, batch.x), batch.y)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Example) -> Logs:
    let l, g = value_and_grad(autocast(loss, bf16), m, batch)
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
