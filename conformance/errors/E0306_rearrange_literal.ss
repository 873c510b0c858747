# E0306: a literal other than 1 in rearrange's input has no label, so the
# output cannot keep it, and rearrange only moves axes: it may not drop
# one. Taking the 3 parts of a fused q/k/v width apart is a `split`.
# expect: error E0306 at 10:30

dim H = 4
dim Dh = 16

fn qkv_heads(x: [b n (3 H Dh)]) -> [b H n Dh]:
    return rearrange(x, b n (3 H Dh) -> b H n Dh)
