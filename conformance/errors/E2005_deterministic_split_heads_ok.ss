# The fix of E2005_deterministic_split_heads.ss: without `split H`, data
# parallelism and `shard params` are deterministic.
# expect: ok

devices cpu
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
