# E1801's help for softmax along the batch axis (E1801_softmax_over_batch.ss)
# shows the same softmax written with lowered ops: exp(z) / sum(exp(z),
# over=b). It runs on any device count and gives one device's numbers.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Lin:
    w: [D C] = normal(std=0.05)

fn probs(m: Lin, x: [b D]) -> [b C]:
    let z = x @ m.w
    return exp(z) / sum(exp(z), over=b)

# Each class's probabilities over the batch sum to 1 (total = C); the
# weighted sums show the values themselves.
fn summary(m: Lin, batch: [b] Digit) -> Logs:
    let p = probs(m, batch.img)
    let w = sum(p * rearrange(to(batch.label, f32), b -> b 1))
    return logs(total=sum(p), weighted=w, squares=sum(p * p))

fn main():
    let data = synthetic_digits(Digit, 25, seed=3)
    let m = Lin.init(seed=0)
    for batch in data.batches(8):
        print(summary(m, batch))
