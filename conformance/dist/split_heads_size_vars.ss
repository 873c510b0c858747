# `split H` through fns typed by size variables (devices.md item 9, Note
# [Size variables carry the split] in interp/eval/eval_heads.cpp): the fns
# name the heads axis `h` (or `g`, or a group `m` = (H Dh)), not H. A size
# variable bound to an axis with H by a split value carries the split, so
# the body runs as if typed with H: per head where an op keeps h (einsum,
# softmax over t), each worker's partial sum all-reduced where h is summed
# away (sum over h, `@ w` over (h d) or over m), the heads gathered for an
# op along h (softmax over g, mean over g, in a fn that `pooled` calls);
# `total`'s g is (3 H Dh), H after 3: whole, as typed with H. Before, such
# a body took a worker's heads for the whole value: on cpu[0 1] the sums
# and means over h covered half the heads (loss 8.2367, one device 8.7552),
# with no error. Every number printed must be one device's.
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

fn attend(q: [b h n d], k: [b h t d], v: [b h t d]) -> [b h n d]:
    let p = softmax(einsum(q, k, b h n d, b h t d -> b h n t), over=t)
    return einsum(p, v, b h n t, b h t d -> b h n d)

fn mixed_heads(o: [b g n d]) -> [b n d]:
    return mean(softmax(o, over=g), over=g)

fn pooled(o: [b h n d]) -> [b n d]:
    return mixed_heads(o) * sum(o, over=h)

fn project(x: [b n m], w: [m e]) -> [b n e] = x @ w

fn mix(o: [b h n d], w: [(h d) e]) -> [b n e]:
    return project(rearrange(o, b h n d -> b n (h d)), w)

fn total(t: [b n g]) -> [b n] = sum(t * t, over=g)

fn loss(m: HeadMixer, x: [b n D]) -> f32:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let o = attend(q, k, v)
    let whole = mean(total(x @ m.w_qkv)) * 0.1
    return mean(mix(o, m.w_o) ** 2) + mean(pooled(o)) + sum(o) * 0.01 + whole

fn step(mut m: HeadMixer, mut opt: SGD[HeadMixer], x: [b n D]) -> f32:
    let l, g = value_and_grad(loss, m, x)
    update(m, opt, g)
    return l

fn main():
    let m = HeadMixer.init(seed=0)
    let opt = sgd(m, lr=0.2, momentum=0.5)
    let x = randn([2 3 D], seed=1)
    for i in range(3):
        print(float(step(m, opt, x)))
    print(float(sum(m.w_o * m.w_o)), float(sum(m.w_qkv)))
