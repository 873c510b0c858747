# E0303: the value returned does not fit the declared result type: the body
# stops at the hidden layer, [b Hd], but the fn promises [b C]. The error is
# at the `return`'s value.
# expect: error E0303 at 15:12

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1)
