# E0101: an einsum takes k tensors, then k input patterns and the output
# pattern: 2k parts between its top-level commas. Here two tensors come with
# one input pattern (k's is missing): 3 parts, so the call does not parse.
# expect: error E0101 at 10:34

dim H = 4
dim Dh = 64

fn scores(q: [b H n Dh], k: [b H t Dh]) -> [b H n t]:
    return einsum(q, k, b H n Dh -> b H n t) / sqrt(Dh)
