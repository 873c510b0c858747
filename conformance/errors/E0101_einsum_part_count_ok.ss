# The fix for E0101_einsum_part_count: one input pattern per tensor.
# expect: ok

dim H = 4
dim Dh = 64

fn scores(q: [b H n Dh], k: [b H t Dh]) -> [b H n t]:
    return einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
