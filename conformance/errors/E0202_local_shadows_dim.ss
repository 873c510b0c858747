# E0202: a local may not shadow a dim. Dh is already the head width (a dim
# in value position is its size), so `let Dh = ...` redeclares it.
# expect: error E0202 at 12:9

dim D = 256
dim H = 4
dim Dh = 64

fn scores(q: [b H n Dh], k: [b H t Dh]) -> [b H n t]:
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t)
    # the head width, restated for the scale: but Dh is a dim
    let Dh = 64
    return s / sqrt(Dh)
