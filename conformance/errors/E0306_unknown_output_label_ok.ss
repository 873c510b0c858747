# The fix for E0306_unknown_output_label: the heads are joined as the group
# (H Dh), and the result type says so.
# expect: ok

dim D = 256
dim H = 4
dim Dh = 64

# Join the heads back into the model width.
fn merge_heads(o: [b H n Dh]) -> [b n (H Dh)]:
    return rearrange(o, b H n Dh -> b n (H Dh))
