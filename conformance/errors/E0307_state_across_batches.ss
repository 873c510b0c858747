# E0307: an RNN's hidden state carried from one batch to the next. Each
# batch of batches(n) has its own size `b` (the last may be smaller; on
# several devices each holds a share of it), so the state made before the
# loop, [B H], is not the next batch's [b H] (Note [State carried across
# batches] in interp/check/fit.cpp).
# expect: error E0307 at 34:29

dim V = 8
dim H = 5
dim N = 12
dim B = 4

data Stream:
    tokens: [N] i64 in 0..V

model Rnn:
    embed: Embedding[V H]
    wh: [H H] = normal(std=0.3)
    head: [H V] = normal(std=0.3)

fn step(mut m: Rnn, mut opt: SGD[Rnn], s: [b] Stream, h: [b H]) -> [b H]:
    let x = embedding(m.embed.table, s.tokens)
    let h2 = h
    for t in range(N):
        h2 = tanh(x[:, t] + h2 @ m.wh)
    return stop_grad(h2)

fn main():
    let ds = dataset(Stream, "streams.safetensors")
    let m = Rnn.init(seed=0)
    let opt = sgd(m, lr=0.1)
    let h = zeros([B H])
    for s in ds.batches(B):
        h = step(m, opt, s, h)
