# `shard params`: a model or gradients made in a worker fn and returned to
# the controller (value_and_grad's Grads, a copy) come back whole, as one
# device's, not the first worker's pieces (Note [Sharded params]); the
# model the controller sent stays its handle. On cpu[0 1 2] the pieces are
# 4,182 of w1's 12,544 values (the last padded by 2) and 54 of w2's 160.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params

dim D = 784
dim Hd = 16
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1) @ m.w2, batch.label)

fn grads_of(m: Mlp, batch: [b] Digit) -> Grads[Mlp]:
    let l, g = value_and_grad(loss, m, batch)
    return g

fn copied(m: Mlp) -> Mlp:
    return copy(m)

fn main():
    let data = synthetic_digits(Digit, 64, seed=0)
    let m = Mlp.init(seed=0)
    for batch in data.batches(64):
        let g = grads_of(m, batch)
        print(float(sum(g.w1 * g.w1)), float(sum(g.w2 * g.w2)))
    let m2 = copied(m)
    print(float(sum(m2.w1)), float(sum(m.w1)))
