# E0304: the result's shape fits but its dtype does not: `predict` promises
# class indices, [b] i64, and returns the largest logit, [b] f32.
# expect: error E0304 at 15:12

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn predict(m: Mlp, x: [b D]) -> [b] i64:
    let logits = relu(x @ m.w1) @ m.w2
    return max(logits, over=C)
