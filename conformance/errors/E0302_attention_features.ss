# E0302: scaled_dot_product_attention contracts q's features with k's
# (q [.. n d] against k [.. t d]); here k was projected to another width,
# so the scores q k^T have no meaning. The error is at the call.
# expect: error E0302 at 11:12

dim H = 4
dim Dh = 16
dim Dk = 8

fn attend(q: [b H n Dh], k: [b H t Dk], v: [b H t Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, causal=true)
