# Deterministic mode with `split H` (docs/errors/E2005.md): a product
# summed over the heads adds each device's heads, in an order the device
# count decides, so the mode refuses it on every device list alike.
# expect: error E2005 at 9:5

devices cpu
    split H
    shard params
    deterministic

dim D = 8
dim H = 6
dim Dh = 4

model Heads:
    w_qkv: [D (3 H Dh)] = normal(std=0.1)
    w_o: [(H Dh) D] = normal(std=0.1)

fn attend(m: Heads, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let p = softmax(einsum(q, k, b H n Dh, b H t Dh -> b H n t), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o
