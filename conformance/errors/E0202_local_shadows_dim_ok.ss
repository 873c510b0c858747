# The fix for E0202_local_shadows_dim: no local; the dim Dh in value
# position is already its size, 64.
# expect: ok

dim D = 256
dim H = 4
dim Dh = 64

fn scores(q: [b H n Dh], k: [b H t Dh]) -> [b H n t]:
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t)
    return s / sqrt(Dh)
