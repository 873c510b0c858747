# `split H` with Linear layers (devices.md item 9, Note [An op in parts
# under split H]): q, k and v are Linear[D (H Dh)] (column-parallel: each
# worker's columns of w and b, no message), the output a Linear[(H Dh) D]
# (row-parallel: each worker's partial product all-reduced, its whole bias
# added once after the sum), and the head a whole Linear[D D]. Before,
# linear gathered every split param and ran whole on every worker. q goes
# through `proj(l: Linear[i j], x)`, typed by size variables: j carries
# the split from the model's type (Note [Size variables carry the split]),
# so the column-parallel part ties its whole input there too; before,
# w_in's gradient was a worker's share. SGD with momentum must give one
# device's losses, gradient norms and params.
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim D = 12
dim H = 6
dim Dh = 2
dim T = 4

model Attn:
    w_in: [D D] = normal(std=0.3)
    q: Linear[D (H Dh)]
    k: Linear[D (H Dh)]
    v: Linear[D (H Dh)]
    out: Linear[(H Dh) D]
    head: Linear[D D]

fn heads(x: [b n (H Dh)]) -> [b H n Dh]:
    return rearrange(x, b n (H Dh) -> b H n Dh)

fn proj(l: Linear[i j], x: [b n i]) -> [b n j]:
    return linear(l, x)

fn attention(m: Attn, x: [b n D]) -> [b n D]:
    let q = heads(proj(m.q, x))
    let k = heads(linear(m.k, x))
    let v = heads(linear(m.v, x))
    let p = softmax(einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    return linear(m.out, rearrange(o, b H n Dh -> b n (H Dh)))

fn loss(m: Attn, x: [b n D], y: [b n D]) -> f32:
    let h0 = tanh(x @ m.w_in)
    let h = h0 + attention(m, layer_norm(h0, over=D))
    return mse(linear(m.head, h), y)

fn train_step(mut m: Attn, mut opt: SGD[Attn], x: [b n D], y: [b n D]) -> Logs:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g), out_b=norm(g.out.b), q_b=norm(g.q.b),
                w_in=norm(g.w_in))

fn main():
    let m = Attn.init(seed=0)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    let x = randn([3 T D], seed=1)
    let y = roll(x, 1, over=T)
    let out = stdout()
    for step in range(4):
        out.write(train_step(m, opt, x, y), step=step)
    print(float(sum(m.out.b)), float(sum(m.q.w * m.q.w)), float(sum(m.out.w)))
