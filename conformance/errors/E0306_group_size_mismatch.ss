# E0306: a group in a pattern binds an axis of the same size. x @ m.w_qkv
# is [b n (3 H Dh)], 768 wide, and the group (H Dh) is 256: the 3 that
# splits it into q, k and v is missing.
# expect: error E0306 at 14:42

dim D = 256
dim H = 4
dim Dh = 64

model Attention:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)

fn qkv(m: Attention, x: [b n D]) -> ([b H n Dh], [b H n Dh], [b H n Dh]):
    let q, k, v = split(x @ m.w_qkv, b n (H Dh) -> b H n Dh)
    return (q, k, v)
