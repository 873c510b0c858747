# E0306: `split` needs exactly one literal k in its input that the output
# leaves out (the number of parts), and gives a k-tuple. x's group (H Dh)
# has none: cutting the width into heads is a `rearrange`.
# expect: error E0306 at 10:52

dim D = 256
dim H = 4
dim Dh = 64

fn heads(x: [b n (H Dh)]) -> [b H n Dh] = split(x, b n (H Dh) -> b H n Dh)
