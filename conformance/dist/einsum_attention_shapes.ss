# Attention's einsums in a loss differentiated per example, on batch
# shares: heads read from their group `(H Dh)` and written back to it
# (each operand permuted once inside einsum), the two products on [b H n Dh]
# (no copy: k read transposed), a label summed in one operand only (t in
# k, the last term), and three operands contracted in the cheaper order
# (u u first: 49^3 multiply-adds against b n 49 49 for x u). The losses and
# final params must not depend on the device count (issue 15: einsum's
# lowering to batched matmuls).
# expect: ok
# tolerance: 1e-5

dim D = 784
dim E = 49
dim H = 7
dim Dh = 7
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Net:
    w_qkv: [E (3 H Dh)] = normal(std=0.1)
    w_o: [(H Dh) C] = normal(std=0.1)
    u: [E E] = normal(std=0.1)

fn attend(m: Net, x: [b n E]) -> [b n (H Dh)]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b n (H Dh))
    let s = einsum(q, k, b n (H Dh), b t (H Dh) -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let qh = rearrange(q, b n (H Dh) -> b H n Dh)
    let kh = rearrange(k, b t (H Dh) -> b H t Dh)
    let s2 = einsum(qh, kh, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p2 = softmax(s2, over=t)
    let o = einsum(p, v, b H n t, b t (H Dh) -> b n (H Dh))
    let vh = rearrange(v, b t (H Dh) -> b H t Dh)
    let o2 = einsum(p2, vh, b H n t, b H t Dh -> b n (H Dh))
    return o + o2 + einsum(q, k, b n (H Dh), b t (H Dh) -> b n (H Dh)) / 100.0

fn loss(m: Net, batch: [b] Digit) -> f32:
    let x = rearrange(batch.img, b (n E) -> b n E)
    let y = einsum(x, m.u, m.u, b n e, e f, f g -> b n g)
    let h = attend(m, x + y / 10.0)
    return cross_entropy(mean(h, over=n) @ m.w_o, batch.label)

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let data = synthetic_digits(Digit, 30, seed=5)
    let m = Net.init(seed=0)
    let opt = sgd(m, lr=0.5)
    for batch in data.batches(7):
        print(step(m, opt, batch))
    print(float(sum(m.w_qkv)), float(sum(m.w_o)), float(sum(m.u)))
