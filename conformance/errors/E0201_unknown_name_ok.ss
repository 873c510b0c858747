# The fix for E0201_unknown_name: the local is spelled as declared.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    let hidden = relu(x @ m.w1)
    return dropout(hidden, 0.1, Eval) @ m.w2
