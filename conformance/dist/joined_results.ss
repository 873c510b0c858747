# A worker fn's result with the batch axis comes back joined in order
# (devices.md item 6): every row, whatever the split (7 rows: 3/2/2).
# expect: ok
# tolerance: 1e-6

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Lin:
    w: [D C] = normal(std=0.05)

fn forward(m: Lin, x: [b D]) -> [b C]:
    return x @ m.w

fn predict(m: Lin, batch: [b] Digit) -> ([b] i64, [b C]):
    let logits = forward(m, batch.img)
    return argmax(logits, over=C), softmax(logits, over=C)

fn main():
    let m = Lin.init(seed=1)
    for batch in synthetic_digits(Digit, 7, seed=5).batches(7):
        let labels, probs = predict(m, batch)
        print(labels)
        print(float(sum(probs * probs)))
