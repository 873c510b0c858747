# A padded batch in which a worker's share is empty (issue 10 item 5):
# 4 items whose `tokens: [n] i64` and `v: [n] f32` fields have 2, 1, 3 and
# 1 values, in batches of 2, are 1/1/0 on three devices. The last worker
# still runs every collective of the step, with no rows, and the result is
# one device's: the losses, the joined padded fields and mask, the params,
# and every worker's copy of them (the last worker's backward pass, with no
# rows, once finished the gradients in another order and summed them into
# the wrong params).
# The program writes its own dataset (a model's tensors, saved) so that the
# case needs no file beside it.
# expect: ok
# tolerance: 1e-6

dim N = 4
dim L = 3
dim V = 8
dim C = 3

data Seq:
    tokens: [n] i64 in 0..V
    v: [n] f32
    y: i64 in 0..C

model Raw:
    tokens: [N L] i64 = zeros()
    tokens_lengths: [N] i64 = zeros()
    v: [N L] = zeros()
    v_lengths: [N] i64 = zeros()
    y: [N] i64 = zeros()

model Emb:
    table: [V C] = normal(std=0.5)
    scale: [C] = ones()

fn fill(mut r: Raw):
    r.tokens = reshape(tensor([1, 2, 0, 3, 0, 0, 4, 5, 6, 7, 0, 0]), [N, L])
    r.tokens_lengths = reshape(tensor([2, 1, 3, 1]), [N])
    r.v = reshape(tensor([0.5, 1.0, 0.0, 2.0, 0.0, 0.0, 1.5, -1.0, 3.0, -2.0, 0.0,
                          0.0]), [N, L])
    r.v_lengths = reshape(tensor([2, 1, 3, 1]), [N])
    r.y = reshape(tensor([0, 1, 1, 2]), [N])

fn loss(m: Emb, batch: [b] Seq) -> f32:
    let keep = to(batch.mask_n, f32)
    let pooled = einsum(embedding(m.table, batch.tokens), batch.v * keep, b n c,
                        b n -> b c)
    return cross_entropy(pooled * m.scale, batch.y)

fn train_step(mut m: Emb, mut opt: SGD[Emb], batch: [b] Seq) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, tokens=batch.tokens, v=batch.v, mask=batch.mask_n)

fn main():
    let raw = Raw.init(seed=0)
    fill(raw)
    save("empty_shares_padded.safetensors", raw)
    let m = Emb.init(seed=1)
    let opt = sgd(m, lr=0.1)
    let out = stdout()
    let ds = dataset(Seq, "empty_shares_padded.safetensors")
    for epoch in range(2):
        for batch in ds.batches(2):
            out.write(train_step(m, opt, batch))
    print(float(sum(m.table * m.table)), float(sum(m.scale)))
    # Then the whole set at once (2/1/1): the last worker's rows count too,
    # so its params must have stayed the others'.
    for batch in ds.batches(4):
        out.write(train_step(m, opt, batch))
    print(float(sum(m.table * m.table)), float(sum(m.scale)))
