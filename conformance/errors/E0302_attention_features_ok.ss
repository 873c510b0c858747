# The fix for E0302_attention_features: k keeps q's width, so q [.. n d]
# is contracted with k [.. t d] and the softmax over t weighs v's rows.
# expect: ok

dim H = 4
dim Dh = 16

fn attend(q: [b H n Dh], k: [b H t Dh], v: [b H t Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, causal=true)
