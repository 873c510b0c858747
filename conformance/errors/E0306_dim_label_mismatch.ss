# E0306: a pattern label that is a dim must match that dim. `x` is [b n D];
# the label Dh (a dim, 64) is written where the axis is D (256).
# expect: error E0306 at 10:61

dim D = 256
dim H = 4
dim Dh = 64

# Channels first, for a convolution over the positions.
fn channels_first(x: [b n D]) -> [b D n] = rearrange(x, b n Dh -> b Dh n)
