# An RNN's hidden state kept in the controller between calls of a worker
# fn that steps through one batch's time chunks (truncated backprop
# through time; Note [State carried across batches] in
# interp/check/fit.cpp). The state is a worker fn's result with the batch
# axis, so each call cuts it as it cuts the batch beside it; sent whole, it
# was a ShapeError on several devices ("size variable `b` is 2 and 4").
# Each image is a stream of pixels, 28 to a chunk; the first 3 chunks of
# each batch are a step each. N devices against one.
# expect: ok
# tolerance: 1e-5

dim D = 784
dim K = 28
dim C = 10
dim H = 8

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Rnn:
    wx: [H] = normal(std=0.5)
    wh: [H H] = normal(std=0.3)
    head: [H C] = normal(std=0.3)

fn run(m: Rnn, x: [b K], h0: [b H]) -> [b H]:
    let h = h0
    for t in range(K):
        h = tanh(rearrange(x[:, t], b -> b 1) * m.wx + h @ m.wh)
    return h

fn loss(m: Rnn, x: [b K], y: [b] i64, h0: [b H]) -> f32:
    return cross_entropy(run(m, x, h0) @ m.head, y)

fn start(batch: [b] Digit) -> [b H] = zeros([b H])

fn chunk_step(mut m: Rnn, mut opt: SGD[Rnn], batch: [b] Digit, h: [b H],
              i: int) -> (f32, [b H]):
    let x = rearrange(batch.img, b (c K) -> c b K)[i]
    let l, g = value_and_grad(loss, m, x, batch.label, h)
    let h2 = run(m, x, h)
    update(m, opt, g)
    return l, stop_grad(h2)

fn main():
    let data = synthetic_digits(Digit, 40, seed=3)
    let m = Rnn.init(seed=1)
    let opt = sgd(m, lr=0.5)
    for batch in data.batches(16):
        let h = start(batch)
        for i in range(3):
            let l, h2 = chunk_step(m, opt, batch, h, i)
            h = h2
            print(l)
