# E0308: an axis by position must exist: the logits are [b C], two axes, so
# positions are 0, 1 (or -1, -2); 2 is out of range.
# expect: error E0308 at 15:32

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn predict(m: Mlp, x: [b D]) -> [b] i64:
    let logits = relu(x @ m.w1) @ m.w2
    return argmax(logits, over=2)
