# E0201: a call of a function that does not exist (`rellu` for `relu`).
# expect: error E0201 at 13:12

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return rellu(x @ m.w1) @ m.w2
