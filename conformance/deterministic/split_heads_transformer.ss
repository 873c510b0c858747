# Deterministic mode with `split H` and `shard params` (Note [Heads one at
# a time] in interp/devices/lower/heads.cpp): a causal transformer stack
# of H = 10 heads, 5 a device on cpu[0 1], 2 on cpu[0 1 2 3 4], gives one
# device's bits, compared with no tolerance: every op on the heads runs
# one head at a time, the output projection's heads and the cotangents of
# the values they share are added in one tree over the head indices.
# Dropout on the scores and after the MLP, clip_norm, AdamW with weight
# decay; the jsonl sink byte for byte, a checkpoint, the final params.
# expect: ok
# devices: cpu
# devices: cpu[0 1]
# devices: cpu[0 1 2 3 4]

devices cpu
    split H
    shard params
    deterministic

dim T = 8
dim D = 40
dim H = 10
dim Dh = 4
dim F = 64
dim L = 2

model Block:
    w_qkv: [D (3 H Dh)] = normal(std=0.05)
    w_o: [(H Dh) D] = normal(std=0.05)
    up: Linear[D F]
    down: Linear[F D]

model Transformer:
    pos: [T D] = normal(std=0.02)
    blocks: [L] Block
    head: Linear[D D]

fn attention(blk: Block, x: [b n D], mode: Mode) -> [b n D]:
    let q, k, v = split(x @ blk.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(dropout(p, 0.1, mode), v, b H n t, b H t Dh -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ blk.w_o

fn mlp(blk: Block, x: [b n D], mode: Mode) -> [b n D]:
    let h = gelu(linear(blk.up, x))
    return dropout(linear(blk.down, h), 0.1, mode)

fn block(blk: Block, x: [b n D], mode: Mode) -> [b n D]:
    let h = x + attention(blk, layer_norm(x, over=D), mode)
    return h + mlp(blk, layer_norm(h, over=D), mode)

fn forward(m: Transformer, x: [b T D], mode: Mode) -> [b T D]:
    let h = x + m.pos
    for blk in m.blocks:
        h = block(blk, h, mode)
    return linear(m.head, layer_norm(h, over=D))

fn loss(m: Transformer, x: [b T D], y: [b T D], mode: Mode) -> f32:
    return mse(forward(m, x, mode), y)

fn train_step(mut m: Transformer, mut opt: AdamW[Transformer], x: [b T D], y: [b T D],
              mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, x, y, mode)
    update(m, opt, clip_norm(g, 1.0))
    return logs(loss=l, grad_norm=norm(g))

fn evaluate(m: Transformer, x: [b T D], y: [b T D]) -> Logs:
    return logs(loss=loss(m, x, y, Eval))

fn main():
    let m = Transformer.init(seed=0)
    let opt = adamw(m, lr=1e-3, weight_decay=0.1)
    let x = randn([6 T D], seed=1)
    let y = roll(x, 1, over=T)
    let log = jsonl("split_heads.jsonl")
    for step in range(6):
        log.write(train_step(m, opt, x, y, Train(seed=step)), step=step)
    print(evaluate(m, x, y))
    print(float(sum(m.blocks.w_o * m.blocks.w_o)), float(sum(m.head.w)))
    save("split_heads.safetensors", m, opt)
