# The fix of E0303_model_spec_block.ss: the return type says the result
# is m.w's blocks, joined along D by the call. A spec naming fields
# (`Lin{w/x}`) splits only those; m.b stays replicated, as the tutorial's
# pipeline keeps its first and last layers.
# expect: ok

devices cpu
mesh x=4

dim D = 8
dim F = 4

model Lin:
    w: [D F] = zeros()
    b: [F] = zeros()

spmd fn weights(m: Lin/x) -> [D/x F]:
    return m.w

spmd fn weights_plus_bias(m: Lin{w/x}) -> [D/x F]:
    return m.w + m.b

fn use(m: Lin) -> [D F] = weights(m) + weights_plus_bias(m)
