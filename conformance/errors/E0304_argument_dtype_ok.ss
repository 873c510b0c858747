# The fix for E0304_argument_dtype: argmax gives the class indices, [b] i64.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C] = relu(x @ m.w1) @ m.w2

fn count_correct(pred: [b] i64, label: [b] i64) -> i64:
    return sum(pred == label)

# How many of the batch's examples the model classifies right.
fn correct(m: Mlp, batch: [b] Digit) -> i64:
    let logits = forward(m, batch.img)
    return count_correct(argmax(logits, over=C), batch.label)
