# pytorch/examples' word language model, small: an embedding, one LSTM layer
# (torch's gate order i, f, g, o), a linear decoder, trained by truncated
# backprop through time. Each batch is B whole token streams; the worker fn
# chunk_step takes one chunk of K steps, and the hidden state (h, c) is kept
# in the controller between its calls, detached (the example's
# repackage_hidden), and started again at zeros for the next batch's
# streams. SGD with momentum and clip_norm. On several devices each device
# holds its share of the streams and of their state (Note [State carried
# across batches] in interp/check/fit.cpp). compare.py runs it beside the
# same training in PyTorch.

devices cpu

dim V = 12  # vocabulary
dim N = 24  # tokens a stream
dim K = 6  # the chunk: truncated backprop through K steps
dim E = 8
dim H = 10
dim B = 6

data Stream:
    tokens: [N] i64 in 0..V
    targets: [N] i64 in 0..V

model Lstm:
    wx: [E (4 H)] f64 = normal(std=0.3)
    wh: [H (4 H)] f64 = normal(std=0.3)
    b: [(4 H)] f64 = zeros()

model Lm:
    embed: Embedding[V E] f64
    lstm: Lstm
    head: Linear[H V] f64

fn cell(l: Lstm, x: [b E] f64, h: [b H] f64, c: [b H] f64) -> ([b H] f64, [b H] f64):
    let i, f, g, o = split(x @ l.wx + h @ l.wh + l.b, b (4 H) -> b H)
    let c2 = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c2), c2

fn run(m: Lm, tok: [b K] i64, y: [b K] i64, h0: [b H] f64, c0: [b H] f64) -> (f64,
                                                                              [b H] f64,
                                                                              [b H] f64):
    let x = embedding(m.embed.table, tok)
    let h = h0
    let c = c0
    let total = zeros([] f64)
    for t in range(K):
        h, c = cell(m.lstm, x[:, t], h, c)
        total = total + cross_entropy(linear(m.head, h), y[:, t])
    return total / K, h, c

fn loss(m: Lm, tok: [b K] i64, y: [b K] i64, h0: [b H] f64, c0: [b H] f64) -> f64:
    let l, h, c = run(m, tok, y, h0, c0)
    return l

fn start(s: [b] Stream) -> [b H] f64 = zeros([b H] f64)

fn chunk_step(mut m: Lm, mut opt: SGD[Lm], s: [b] Stream, h: [b H] f64, c: [b H] f64,
              i: int) -> (Logs, [b H] f64, [b H] f64):
    let tok = rearrange(s.tokens, b (n K) -> n b K)[i]
    let y = rearrange(s.targets, b (n K) -> n b K)[i]
    let l, g = value_and_grad(loss, m, tok, y, h, c)
    let l2, h2, c2 = run(m, tok, y, h, c)
    let gn = norm(g)
    update(m, opt, clip_norm(g, 0.25))
    return logs(loss=l, grad_norm=gn), stop_grad(h2), stop_grad(c2)

fn main():
    let ds = dataset(Stream, "data.safetensors")
    let m = load("init.safetensors", Lm)
    let opt = sgd(m, lr=0.5, momentum=0.9)
    let out = jsonl("log.jsonl")
    for s in ds.batches(B):
        let h = start(s)
        let c = start(s)
        for i in range(N // K):
            let r, h2, c2 = chunk_step(m, opt, s, h, c, i)
            h, c = h2, c2
            out.write(r)
    save("final.safetensors", m, opt)
