# The fix for E0306_group_size_mismatch: the input group names the 3 to
# split off.
# expect: ok

dim D = 256
dim H = 4
dim Dh = 64

model Attention:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)

fn qkv(m: Attention, x: [b n D]) -> ([b H n Dh], [b H n Dh], [b H n Dh]):
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    return (q, k, v)
