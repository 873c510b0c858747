# `split H` with a stacked model (`[L] Block`) made on the workers, inside
# a worker fn, rather than sent by the controller (issue 12's leftovers):
# its store is whole there, never cut by heads on arrival, so each read of
# a param with H takes this worker's heads from the whole stacked tensor
# (read_heads_param), where the stack's leading L axis must not be taken
# for the heads axis. The loss, the gradient's norm and a param's sum
# (the stacked w_o, [L (H Dh) D]) must be one device's.
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim T = 8
dim D = 48
dim H = 6
dim Dh = 8
dim F = 96
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

fn fresh(sent: Transformer, x: [b T D], y: [b T D]) -> Logs:
    # [sent] makes this a worker fn; the model it trains is made here.
    let m = Transformer.init(seed=0)
    let l, g = value_and_grad(loss, m, x, y, Eval)
    let wo = sum(g.blocks.w_o * g.blocks.w_o)
    let qkv = sum(g.blocks.w_qkv * g.blocks.w_qkv)
    return logs(loss=l, grad_norm=norm(g), wo=wo, qkv=qkv)

fn main():
    let x = randn([4 T D], seed=1)
    let y = roll(x, 1, over=T)
    print(fresh(Transformer.init(seed=5), x, y))
