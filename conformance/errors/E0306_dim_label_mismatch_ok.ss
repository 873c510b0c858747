# The fix for E0306_dim_label_mismatch: the label is the dim D.
# expect: ok

dim D = 256
dim H = 4
dim Dh = 64

# Channels first, for a convolution over the positions.
fn channels_first(x: [b n D]) -> [b D n] = rearrange(x, b n D -> b D n)
