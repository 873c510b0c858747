# The fix for E0308_absent_axis: the softmax is over the classes, C.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn predict_proba(m: Mlp, x: [b D]) -> [b C]:
    let logits = relu(x @ m.w1) @ m.w2
    return softmax(logits, over=C)
