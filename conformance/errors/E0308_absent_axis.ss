# E0308: `over=` names an axis the operand does not have. The logits are
# [b C]; the class axis is C, and D is the input width. The error is at
# over='s value.
# expect: error E0308 at 16:33

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn predict_proba(m: Mlp, x: [b D]) -> [b C]:
    let logits = relu(x @ m.w1) @ m.w2
    return softmax(logits, over=D)
