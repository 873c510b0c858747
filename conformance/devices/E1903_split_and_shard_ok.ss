# split H with shard params is not E1903: the params with an H axis are
# split along it, the others sharded.
# devices: cpu[0 1 2]
# expect: ok

devices cpu[0 1 2]
    split H
    shard params

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
