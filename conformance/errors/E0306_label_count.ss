# E0306: a pattern's input has one label per axis of the operand. `x` is
# [b n (H Dh)], three axes, and the pattern names four.
# expect: error E0306 at 11:25

dim D = 256
dim H = 4
dim Dh = 64

# Cut the model width into heads.
fn heads(x: [b n (H Dh)]) -> [b H n Dh]:
    return rearrange(x, b n H Dh -> b H n Dh)
