# The fix for E0301_bias_wrong_axis: the hidden layer adds its own bias,
# [b Hd] + [Hd].
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    b1: [Hd] = zeros()
    w2: [Hd C] = normal(std=1 / sqrt(Hd))
    b2: [C] = zeros()

fn forward(m: Mlp, x: [b D]) -> [b C]:
    # [b Hd] + [Hd]: the bias broadcasts over b
    let h = relu(x @ m.w1 + m.b1)
    return h @ m.w2 + m.b2
