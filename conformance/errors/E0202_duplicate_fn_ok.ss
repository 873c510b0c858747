# The fix for E0202_duplicate_fn: the second fn has its own name.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

# The evaluation-time forward pass: class probabilities.
fn predict(m: Mlp, x: [b D]) -> [b C]:
    return softmax(forward(m, x), over=C)
