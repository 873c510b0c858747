# E0203: a model has no field of that name: Mlp's params are w1 and w2.
# expect: error E0203 at 14:25

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    let h = relu(x @ m.w1)
    return h @ m.w2 + m.b2
