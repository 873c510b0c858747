# `split H` and remat(f) of a fn typed by size variables (Note [Size
# variables carry the split] in interp/eval/eval_heads.cpp): a call
# carries the split into `score`'s `h` from its arguments' types, but the
# backward pass runs remat(score) again from its values alone, which would
# take a worker's heads for the whole value (softmax over h of 1/N of the
# heads). So the call stops with a ValueError naming the argument and
# saying to type it with H, on every device list that splits H. Typed
# `q: [b H n d]` (softmax over=H), the same program runs and gives one
# device's loss on cpu[0 1] and cpu[0 1 2] (2.10503, checked by hand).
# expect: runtime ValueError
# devices: cpu[0 1]
# devices: cpu[0 1 2]

devices cpu
    split H

dim D = 12
dim H = 6
dim Dh = 2

model Qkv:
    w_qkv: [D (3 H Dh)] = normal(std=0.3)

fn score(q: [b h n d]) -> [b h n d] = softmax(q, over=h)

fn loss(m: Qkv, x: [b n D]) -> f32:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    return sum(remat(score)(q) * v)

fn step(m: Qkv, x: [b n D]) -> f32:
    let l, g = value_and_grad(loss, m, x)
    return l

fn main():
    let m = Qkv.init(seed=0)
    print(float(step(m, randn([2 3 D], seed=1))))
