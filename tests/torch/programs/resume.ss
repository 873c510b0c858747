# Resuming from a checkpoint that PyTorch wrote: compare.py trains a few SGD
# steps in torch and writes the params and momentum buffers under the names
# ss uses (library.md, Checkpoints); this program loads them with the
# optimizer, trains on with the lr set from the loaded step count, and
# saves, for torch to read back.

devices cpu

import "stdlib_f64.ss"

dim D = 16
dim H = 24
dim C = 5
dim B = 16
dim TOTAL = 40      # the schedule's length: torch's steps and these

data Example:
    x: [D] f64
    y: i64 in 0..C

model Mlp:
    l1: Linear[D H]
    l2: Linear[H C]

fn loss(m: Mlp, batch: [b] Example) -> f64:
    let logits = linear(m.l2, tanh(linear(m.l1, batch.x)))
    return cross_entropy(logits, batch.y)

fn train_step(mut m: Mlp, mut opt: SGD[Mlp], batch: [b] Example) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let ds = dataset(Example, "data.safetensors")
    let m, opt = load("resume.safetensors", Mlp, sgd)
    let out = jsonl("log.jsonl")
    for batch in ds.batches(B):
        let step = opt.step
        let lr = cosine_lr(step, TOTAL, 0.2)
        set_lr(opt, lr)
        let r = train_step(m, opt, batch)
        out.write(logs(loss=r.loss, lr=lr), step=step)
    save("final.safetensors", m, opt)
