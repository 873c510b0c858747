# A batch-axis tensor inside logs(...) returned from a worker fn is the
# whole batch, joined in order (devices.md item 6; issue 10 item 3: on
# cpu[0 1] it was the first worker's share). Batches of 7 and 5 split
# 3/2/2 and 2/2/1: the labels, the predictions, a [b C] value, a bool and
# a value whose batch axis is not leading ([C b]) must all be one
# device's, through a sink and through print.
# expect: ok
# tolerance: 1e-6

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Lin:
    w: [D C] = normal(std=0.05)

fn look(m: Lin, batch: [b] Digit) -> Logs:
    let logits = batch.img @ m.w
    let pred = argmax(logits, over=C)
    return logs(j=batch.label, pred=pred, hit=pred == batch.label,
                p=softmax(logits, over=C), pt=rearrange(logits, b c -> c b),
                acc=mean(pred == batch.label))

fn main():
    let m = Lin.init(seed=1)
    let out = stdout()
    for batch in synthetic_digits(Digit, 12, seed=5).batches(7):
        let r = look(m, batch)
        out.write(r)
        print(r)
