# E0202: two top-level fns with the same name.
# expect: error E0202 at 17:4

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

# Meant as the evaluation-time forward pass, but named like the one above.
# A second declaration of a name is an error, not an overload.
fn forward(m: Mlp, x: [b D]) -> [b C]:
    return softmax(relu(x @ m.w1) @ m.w2, over=C)
