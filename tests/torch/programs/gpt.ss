# A GPT-style block: token embedding plus positions, pre-norm causal
# multi-head attention (einsum, the causal mask), a gelu MLP, a final
# layer_norm and a head; cross_entropy over [b n V] for next-token targets;
# AdamW with clip_norm. The attention as the spec writes it runs as one
# fused scaled_dot_product_attention (`ss explain` says so); `-D
# PRODUCTS=2` computes the attention's two products with `@` instead of
# einsum (the same values), `-D PRODUCTS=3` with einsums that read the
# heads from their group `(H Dh)` (each operand permuted in the einsum),
# `-D PRODUCTS=4` with the einsums op by op, unfused. compare.py runs it
# beside the same training in PyTorch.

devices cpu

dim V = 16  # vocabulary
dim T = 8  # sequence length
dim D = 16
dim H = 2
dim Dh = 8  # H * Dh = D
dim F = 32
dim B = 8
dim PRODUCTS = 1  # the attention: 1 fused, 2 with @, 3 grouped, 4 einsums unfused

data Sequence:
    tokens: [T] i64 in 0..V
    targets: [T] i64 in 0..V

model Block:
    ln1: LayerNorm[D] f64
    w_qkv: [D (3 H Dh)] f64 = normal(std=0.02)
    w_o: [(H Dh) D] f64 = normal(std=0.02)
    ln2: LayerNorm[D] f64
    up: Linear[D F] f64
    down: Linear[F D] f64

model Gpt:
    embed: Embedding[V D] f64
    pos: [T D] f64 = normal(std=0.02)
    blk: Block
    ln_f: LayerNorm[D] f64
    head: [D V] f64 = normal(std=0.02)

fn attention(blk: Block, x: [b n D] f64) -> [b n D] f64:
    let qkv = x @ blk.w_qkv
    let q, k, v = split(qkv, b n (3 H Dh) -> b H n Dh)
    if PRODUCTS == 1:
        # Fused: one scaled_dot_product_attention (Note [The attention
        # written out] in interp/check/fusion.cpp).
        let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
        let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
        let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
        return rearrange(o, b H n Dh -> b n (H Dh)) @ blk.w_o
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t)
    s = s / sqrt(Dh)  # PRODUCTS 4: as written, op by op (not fused)
    if PRODUCTS == 2:
        s = (q @ rearrange(k, b H t Dh -> b H Dh t)) / sqrt(Dh)
    let qg, kg, vg = split(qkv, b n (3 H Dh) -> b n (H Dh))
    if PRODUCTS == 3:
        s = einsum(qg, kg, b n (H Dh), b t (H Dh) -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    if PRODUCTS == 2:
        o = p @ v
    if PRODUCTS == 3:
        o = einsum(p, vg, b H n t, b t (H Dh) -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ blk.w_o

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
