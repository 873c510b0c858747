# The fix for E0306_rearrange_literal: split gives the 3 parts.
# expect: ok

dim H = 4
dim Dh = 16

fn qkv_heads(x: [b n (3 H Dh)]) -> ([b H n Dh], [b H n Dh], [b H n Dh]):
    return split(x, b n (3 H Dh) -> b H n Dh)
