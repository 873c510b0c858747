# `split H` with a split value passed to value_and_grad as an extra
# argument of a fn typed by size variables (Note [Size variables carry the
# split] in interp/eval/eval_heads.cpp): `head_loss` names the heads axis
# `h`, and q, split along H in `step`, reaches it through value_and_grad,
# not a direct call. The sum over h must cover every head (each worker's
# partial sum all-reduced), and the softmax along h must see every head
# (gathered). Before, the
# call went without the arguments' types, so each worker took its own heads
# for the whole of q, with no error. Every number printed must be one
# device's.
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim D = 18
dim H = 6
dim Dh = 3

model HeadMixer:
    w_qkv: [D (3 H Dh)] = normal(std=0.25)
    w_o: [(H Dh) D] = normal(std=0.25)

fn head_loss(m: HeadMixer, q: [b h n d]) -> f32:
    let summed = mean(sum(q, over=h) ** 2)
    let heads = mean(softmax(q, over=h) * q)
    return summed + heads + mean(m.w_o * m.w_o) * 0.1

fn step(mut m: HeadMixer, mut opt: SGD[HeadMixer], x: [b n D]) -> f32:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let l, g = value_and_grad(head_loss, m, q)
    update(m, opt, g)
    return l

fn main():
    let m = HeadMixer.init(seed=0)
    let opt = sgd(m, lr=0.2, momentum=0.5)
    let x = randn([2 3 D], seed=1)
    for i in range(3):
        print(float(step(m, opt, x)))
    print(sum(m.w_o * m.w_o))
