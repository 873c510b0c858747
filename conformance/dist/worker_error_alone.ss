# A runtime error raised on one worker alone (issue 10, C): the ids of the
# rows with label 8 or 9 are past the table, and with the batch split only
# the worker holding such rows fails. The program stops with one device's
# error kind, not a WorkerError after the collective timeout while the
# other workers wait in the next all-reduce.
# expect: runtime ValueError

dim D = 784
dim V = 12
dim K = 4

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..10

model Emb:
    table: [V K] = normal(std=0.1)

fn loss(m: Emb, batch: [b] Digit) -> f32:
    let ids = batch.label + 4
    return mean(sum(embedding(m.table, ids), over=K))

fn train_step(mut m: Emb, mut opt: SGD[Emb], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let m = Emb.init(seed=0)
    let opt = sgd(m, lr=0.1)
    for batch in synthetic_digits(Digit, 30, seed=2).batches(30):
        print(train_step(m, opt, batch))
