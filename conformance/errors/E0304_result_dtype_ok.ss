# The fix for E0304_result_dtype: argmax gives the class indices.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn predict(m: Mlp, x: [b D]) -> [b] i64:
    let logits = relu(x @ m.w1) @ m.w2
    return argmax(logits, over=C)
