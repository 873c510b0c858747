# The attention example with `split H` (spec/README.md; devices.md item 9):
# on cpu[0 1] each worker holds 6 of H = 12 heads, on cpu[0 1 2] 4. w_qkv's
# group (3 H Dh) has H after 3, so it is whole: every worker computes the
# whole x @ m.w_qkv and cuts q, k and v to its heads (no message; the
# backward all-reduces their cotangent); s, p and o are computed per head;
# w_o, whose group starts with H, holds only the worker's rows, and the last
# line all-reduces the partial products. Trained with SGD and momentum (its
# buffer of w_o split too), the logged losses and gradient norms (whole
# params' and heads' squares summed), and the params read whole in the
# controller, must be one device's (item 1). (AdamW: split_heads_transformer;
# here it would turn the rounding of a gradient near its eps, 1e-8, into
# an update of lr's size.)
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim D = 768
dim H = 12
dim Dh = 64

model Attention:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)

fn attention(m: Attention, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o

fn loss(m: Attention, x: [b n D], y: [b n D]) -> f32:
    return mse(attention(m, x), y)

fn train_step(mut m: Attention, mut opt: SGD[Attention], x: [b n D],
              y: [b n D]) -> Logs:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn main():
    let m = Attention.init(seed=0)
    let opt = sgd(m, lr=0.5, momentum=0.9, weight_decay=0.01)
    let x = randn([2 8 D], seed=1)
    let y = randn([2 8 D], seed=2) * 0.1
    let out = stdout()
    for step in range(4):
        out.write(train_step(m, opt, x, y))
    # Read in the controller: w_o gathered whole from the workers' rows.
    print(float(sum(m.w_o * m.w_o)), float(sum(m.w_qkv)), opt.step)
    print(float(sum(attention(m, x))))
