# A small pre-norm transformer trained to copy the previous position's vector:
# causal multi-head attention, a GELU MLP, residuals, dropout, stacked blocks.

devices cpu

dim T = 32  # sequence length
dim D = 128  # model width
dim H = 4  # heads
dim Dh = 32  # head width: H * Dh = D
dim F = 512  # MLP width
dim L = 2  # blocks

model Block:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)
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

fn toy_inputs(seed: int) -> [16 T D] = randn([16 T D], seed=seed)

# The target at position i is the input at position i - 1 (cyclically).
fn previous(x: [b T D]) -> [b T D] = roll(x, 1, over=T)

fn main():
    let m = Transformer.init(seed=0)
    let opt = adamw(m, lr=1e-3, weight_decay=0.1)
    let x = toy_inputs(1)
    let y = previous(x)
    let out = stdout()
    for step in range(20):
        out.write(train_step(m, opt, x, y, Train(seed=step)), step=step)
    print(evaluate(m, x, y))
