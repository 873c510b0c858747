# `split H` with column-parallel products (devices.md item 9, Note [Split
# heads]): q, k and v are each `h @ m.w_q` with w_q: [D (H Dh)] split by
# columns, so a whole h meets only each worker's heads, and so do the
# whole `m.scale` ([Dh], beside split q: per head) and `m.mix` ([Dh], in
# an einsum that sums the heads away: a partial sum). Each worker's
# cotangent of such a whole operand covers its own heads, and the backward
# pass all-reduces it (Megatron's f): before, on cpu[0 1] w_in's gradient
# norm was half one device's and scale's and mix's gradients a worker's
# share, with no error. AdamW's steps must give one device's losses,
# gradient norms and params.
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim D = 16
dim H = 6
dim Dh = 4
dim T = 5

model Attn:
    w_in: [D D] = normal(std=0.2)
    w_q: [D (H Dh)] = normal(std=0.2)
    w_k: [D (H Dh)] = normal(std=0.2)
    w_v: [D (H Dh)] = normal(std=0.2)
    scale: [Dh] = normal(std=0.5)
    mix: [Dh] = normal(std=0.5)
    w_o: [(H Dh) D] = normal(std=0.2)

fn heads(x: [b n (H Dh)]) -> [b H n Dh]:
    return rearrange(x, b n (H Dh) -> b H n Dh)

fn loss(m: Attn, x: [b n D], y: [b n D]) -> f32:
    let h = tanh(x @ m.w_in)
    let q = heads(h @ m.w_q) * m.scale
    let k = heads(h @ m.w_k)
    let v = heads(h @ m.w_v)
    let p = softmax(einsum(q, k, b H n Dh, b H t Dh -> b H n t), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    let out = rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o
    let pooled = einsum(o, m.mix, b H n Dh, Dh -> b n)
    return mse(out + h, y) + mean(pooled * pooled)

fn train_step(mut m: Attn, mut opt: AdamW[Attn], x: [b n D], y: [b n D]) -> Logs:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g), w_in=norm(g.w_in), scale=norm(g.scale),
                mix=norm(g.mix))

fn main():
    let m = Attn.init(seed=0)
    let opt = adamw(m, lr=1e-2, weight_decay=0.1)
    let x = randn([3 T D], seed=1)
    let y = roll(x, 1, over=T)
    let out = stdout()
    for step in range(4):
        out.write(train_step(m, opt, x, y), step=step)
    print(float(sum(m.w_in * m.w_in)), float(sum(m.scale)), float(sum(m.mix)))
