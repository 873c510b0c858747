# E0203: a Logs value has the fields named in its `logs(...)`: evaluate
# logs loss and acc, so `r.accuracy` is unknown.
# expect: error E0203 at 28:13

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

fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:
    let logits = forward(m, batch.img)
    return logs(loss=cross_entropy(logits, batch.label),
                acc=mean(argmax(logits, over=C) == batch.label))

fn main():
    let test = synthetic_digits(Digit, 1000, seed=1)
    let m = Mlp.init(seed=0)
    let r = mean_logs(evaluate, m, test.batches(100))
    print(r.accuracy)
