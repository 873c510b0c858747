# The fix for E0306_split_literal: a rearrange cuts the width into heads.
# expect: ok

dim D = 256
dim H = 4
dim Dh = 64

fn heads(x: [b n (H Dh)]) -> [b H n Dh] = rearrange(x, b n (H Dh) -> b H n Dh)
