# E0202: `let` declares a name for the rest of its block; declaring it again
# in the same block is an error (rebind it with `=` instead).
# expect: error E0202 at 16:9

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D], mode: Mode) -> [b C]:
    let h = relu(x @ m.w1)
    let out = h @ m.w2
    let h = dropout(h, 0.1, mode)
    return out
