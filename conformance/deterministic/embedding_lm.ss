# Deterministic mode with an embedding and a loss over `(b t)`: a tiny
# causal LM whose token table's gradient adds rows by token, a chunk at a
# time, and whose cross_entropy takes the batch as the first item of a
# group (each chunk's rows of `(b t)` are its sequences' positions).
# Adam, 10 sequences of 6 tokens a step (chunks of 8 and 2).
# expect: ok
# devices: cpu
# devices: cpu[0 1]
# devices: cpu[0 1 2]
# devices: cpu[0 1 2 3 4]

devices cpu
    deterministic

dim V = 17
dim T = 6
dim D = 16

model Lm:
    emb: [V D] = normal(std=0.1)
    pos: [T D] = normal(std=0.1)
    mix: Linear[D D]
    out: [D V] = normal(std=0.1)

fn logits(m: Lm, tokens: [b T] i64) -> [b T V]:
    let h = embedding(m.emb, tokens) + m.pos
    let s = einsum(h, h, b n D, b t D -> b n t) / sqrt(D)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let c = einsum(p, h, b n t, b t D -> b n D)
    return gelu(linear(m.mix, c)) @ m.out

fn loss(m: Lm, tokens: [b T] i64, next: [b T] i64) -> f32:
    let flat = rearrange(logits(m, tokens), b t v -> (b t) v)
    return cross_entropy(flat, rearrange(next, b t -> (b t)))

fn step(mut m: Lm, mut opt: Adam[Lm], tokens: [b T] i64, next: [b T] i64) -> Logs:
    let l, g = value_and_grad(loss, m, tokens, next)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let m = Lm.init(seed=4)
    let opt = adam(m, lr=1e-2)
    let tokens = argmax(randn([10 T V], seed=5), over=V)
    let next = roll(tokens, -1, over=T)
    let out = stdout()
    for i in range(8):
        out.write(step(m, opt, tokens, next), step=i)
    print(float(sum(m.emb)), float(sum(m.out * m.out)))
