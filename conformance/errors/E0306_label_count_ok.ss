# The fix for E0306_label_count: the grouped axis is written as a group.
# expect: ok

dim D = 256
dim H = 4
dim Dh = 64

# Cut the model width into heads.
fn heads(x: [b n (H Dh)]) -> [b H n Dh]:
    return rearrange(x, b n (H Dh) -> b H n Dh)
