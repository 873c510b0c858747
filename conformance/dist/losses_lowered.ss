# Every loss lowered across the batch axis (Note [A loss's reduction] in
# ops/defs/losses.cpp) with its options, logged on its own and inside a
# differentiated loss: cross_entropy with weight=, ignore_index= (a class
# that falls unevenly on the devices, so each share's denominator differs)
# and label_smoothing=; nll_loss; both binary cross-entropies with weight=
# and pos_weight=; kl_div's batchmean; huber and smooth_l1; reduction="sum";
# and reduction="none", whose per-example losses stay split as the batch
# and come back joined. Uneven batches (203 in fifties: a last batch of 3)
# and a batch of 1 (one device holds it, the others nothing).
# expect: ok
# tolerance: 1e-5

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w: [D C] = normal(std=0.05)

fn class_weight() -> [C]:
    return to(arange(C), f32) / 10.0 + 0.5

fn loss(m: Net, batch: [b] Digit) -> f32:
    let h = batch.img @ m.w
    let hot = to(one_hot(batch.label, C), f32)
    let ce = cross_entropy(h, batch.label, weight=class_weight(), ignore_index=3,
                           label_smoothing=0.1)
    let nll = nll_loss(log_softmax(h, over=C), batch.label, ignore_index=7,
                       reduction="sum") / 100.0
    let bce = binary_cross_entropy(sigmoid(h), hot, weight=class_weight())
    let bcel = binary_cross_entropy_with_logits(h, hot, pos_weight=class_weight())
    let kl = kl_div(log_softmax(h, over=C), softmax(h * 2.0, over=C),
                    reduction="batchmean")
    let per = sum(huber(h, hot, delta=0.5, reduction="none")) / 1000.0
    return ce + nll + bce + bcel + kl + per + smooth_l1(h, hot * 0.5, beta=0.25)

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn each(m: Net, batch: [b] Digit) -> [b]:
    return cross_entropy(batch.img @ m.w, batch.label, ignore_index=3, reduction="none")

fn stats(m: Net, batch: [b] Digit) -> Logs:
    let h = batch.img @ m.w
    return logs(ce=cross_entropy(h, batch.label, ignore_index=3),
                nll=nll_loss(log_softmax(h, over=C), batch.label,
                             weight=class_weight()),
                kl=kl_div(log_softmax(h, over=C), softmax(h, over=C) * 0.5,
                          reduction="sum"), mse=mse(h, h * 0.9, reduction="sum"))

fn main():
    let data = synthetic_digits(Digit, 203, seed=2)
    let m = Net.init(seed=3)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    for batch in data.batches(50, shuffle=4):
        print(step(m, opt, batch))
        print(stats(m, batch))
    for batch in data.take(5).batches(5):
        print(each(m, batch))
    for batch in data.take(1).batches(1):
        print(stats(m, batch))
        print(each(m, batch))
    print(float(sum(m.w)))
