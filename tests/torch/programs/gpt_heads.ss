# gpt.ss with its attention's projections as Linear layers, as Hugging
# Face's GPT-NeoX and Llama write them (q_proj, k_proj, v_proj, o_proj):
# q and v are Linear[D (H Dh)], o a Linear[(H Dh) D], and k a plain
# [D (H Dh)] param (a bias on k shifts each row of scores by a constant,
# which softmax ignores: its gradient is rounding noise, which AdamW
# scales up). With `split H` q, k and v are column-parallel (each device's
# columns and bias, and the input's cotangent all-reduced), o row-parallel
# (each device's partial product all-reduced, its bias added once), the
# rest whole. compare.py
# runs it beside the same training in PyTorch.

devices cpu

dim V = 16  # vocabulary
dim T = 8  # sequence length
dim D = 16
dim H = 4
dim Dh = 4  # H * Dh = D
dim F = 32
dim B = 8

data Sequence:
    tokens: [T] i64 in 0..V
    targets: [T] i64 in 0..V

model Block:
    ln1: LayerNorm[D] f64
    q: Linear[D (H Dh)] f64
    w_k: [D (H Dh)] f64 = normal(std=0.02)
    v: Linear[D (H Dh)] f64
    o: Linear[(H Dh) D] f64
    ln2: LayerNorm[D] f64
    up: Linear[D F] f64
    down: Linear[F D] f64

model Gpt:
    embed: Embedding[V D] f64
    pos: [T D] f64 = normal(std=0.02)
    blk: Block
    ln_f: LayerNorm[D] f64
    head: [D V] f64 = normal(std=0.02)

fn heads(x: [b n (H Dh)] f64) -> [b H n Dh] f64:
    return rearrange(x, b n (H Dh) -> b H n Dh)

fn attention(blk: Block, x: [b n D] f64) -> [b n D] f64:
    let q = heads(linear(blk.q, x))
    let k = heads(x @ blk.w_k)
    let v = heads(linear(blk.v, x))
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    return linear(blk.o, rearrange(o, b H n Dh -> b n (H Dh)))

fn block(blk: Block, x: [b n D] f64) -> [b n D] f64:
    let h = x + attention(blk, layer_norm(x, over=D, affine=blk.ln1))
    let u = gelu(linear(blk.up, layer_norm(h, over=D, affine=blk.ln2)))
    return h + linear(blk.down, u)

fn forward(m: Gpt, tokens: [b T] i64) -> [b T V] f64:
    let h = block(m.blk, embedding(m.embed.table, tokens) + m.pos)
    return layer_norm(h, over=D, affine=m.ln_f) @ m.head

fn loss(m: Gpt, batch: [b] Sequence) -> f64:
    return cross_entropy(forward(m, batch.tokens), batch.targets)

fn train_step(mut m: Gpt, mut opt: AdamW[Gpt], batch: [b] Sequence) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, clip_norm(g, 1.0))
    return logs(loss=l, grad_norm=norm(g))

fn main():
    let ds = dataset(Sequence, "data.safetensors")
    let m = load("init.safetensors", Gpt)
    let opt = adamw(m, lr=0.01, betas=(0.9, 0.95), weight_decay=0.1)
    let out = jsonl("log.jsonl")
    for batch in ds.batches(B):
        out.write(train_step(m, opt, batch))
    save("final.safetensors", m, opt)
