# E0306: every label of a pattern's output must come from its input (or be a
# literal 1). `D` is not among the input's labels b H n Dh.
# expect: error E0306 at 11:41

dim D = 256
dim H = 4
dim Dh = 64

# Join the heads back into the model width.
fn merge_heads(o: [b H n Dh]) -> [b n D]:
    return rearrange(o, b H n Dh -> b n D)
