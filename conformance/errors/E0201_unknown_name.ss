# E0201: a name that is not a local, parameter, fn, dim, model or builtin
# (`hiden` for `hidden`).
# expect: error E0201 at 15:20

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    let hidden = relu(x @ m.w1)
    return dropout(hiden, 0.1, Eval) @ m.w2
