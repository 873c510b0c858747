# The fix for E0307_state_across_batches: truncated backprop through time
# within one batch. The fn takes whole streams and carries the hidden state
# across their time chunks (a step per chunk, the state detached between
# them, as torch's word language model does), so the state has the batch's
# size, and on several devices each device carries its share's.
# expect: ok

dim V = 8
dim H = 5
dim N = 12
dim K = 4  # the chunk's length: N / K chunks

data Stream:
    tokens: [N] i64 in 0..V
    targets: [N] i64 in 0..V

model Rnn:
    embed: Embedding[V H]
    wh: [H H] = normal(std=0.3)
    head: [H V] = normal(std=0.3)

fn chunk_loss(m: Rnn, tok: [b K] i64, y: [b K] i64, h0: [b H]) -> (f32, [b H]):
    let x = embedding(m.embed.table, tok)
    let h = h0
    let l = zeros([])
    for t in range(K):
        h = tanh(x[:, t] + h @ m.wh)
        l = l + cross_entropy(h @ m.head, y[:, t])
    return l / K, h

fn loss(m: Rnn, tok: [b K] i64, y: [b K] i64, h0: [b H]) -> f32:
    let l, h = chunk_loss(m, tok, y, h0)
    return l

fn train(mut m: Rnn, mut opt: SGD[Rnn], s: [b] Stream) -> f32:
    let tok = rearrange(s.tokens, b (c K) -> c b K)
    let y = rearrange(s.targets, b (c K) -> c b K)
    let h = zeros([b H])
    let total = zeros([])
    for i in range(N // K):
        let l, g = value_and_grad(loss, m, tok[i], y[i], h)
        let l2, h2 = chunk_loss(m, tok[i], y[i], h)
        h = stop_grad(h2)
        update(m, opt, g)
        total = total + l
    return total / (N // K)
