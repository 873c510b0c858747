# The fix for E0203_model_field: the model declares the bias it uses.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))
    b2: [C] = zeros()

fn forward(m: Mlp, x: [b D]) -> [b C]:
    let h = relu(x @ m.w1)
    return h @ m.w2 + m.b2
