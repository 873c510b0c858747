# Resuming from checkpoints that PyTorch wrote: compare.py trains a few
# steps in torch, one copy of the model with SGD (momentum, weight decay)
# and one with AdamW, and writes each copy's params and optimizer state
# under the names ss uses (library.md, Checkpoints); this program loads
# them with their optimizers, trains both on with the lr set from the
# loaded step counts, and saves them, for torch to read back.

devices cpu

dim D = 16
dim H = 24
dim C = 5
dim B = 16
dim TOTAL = 40  # the schedule's length: torch's steps and these

data Example:
    x: [D] f64
    y: i64 in 0..C

model Mlp:
    l1: Linear[D H] f64
    l2: Linear[H C] f64

fn loss(m: Mlp, batch: [b] Example) -> f64:
    let logits = linear(m.l2, tanh(linear(m.l1, batch.x)))
    return cross_entropy(logits, batch.y)

fn sgd_step(mut m: Mlp, mut opt: SGD[Mlp], batch: [b] Example) -> f64:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return l

fn adamw_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Example) -> f64:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return l

# The optimizers' hyperparameters and step counts come from the files.
fn main():
    let ds = dataset(Example, "data.safetensors")
    let m1, o1 = load("resume_sgd.safetensors", Mlp, sgd)
    let m2, o2 = load("resume_adamw.safetensors", Mlp, adamw)
    let out = jsonl("log.jsonl")
    for batch in ds.batches(B):
        let step = o1.step
        set_lr(o1, cosine_lr(step, TOTAL, 0.2))
        set_lr(o2, cosine_lr(o2.step, TOTAL, 0.01))
        out.write(logs(sgd_loss=sgd_step(m1, o1, batch), sgd_lr=o1.lr,
                       adamw_loss=adamw_step(m2, o2, batch), adamw_lr=o2.lr), step=step)
    save("final_sgd.safetensors", m1, o1)
    save("final_adamw.safetensors", m2, o2)
