# Fns and models generic over their dtype (Note [Dtype variables] in
# interp/check/generics.cpp): a model declared `model Mlp T:` made in f64
# by init(dtype=), the stdlib's Linear and LayerNorm inside it following
# its dtype, a generic loss passed to value_and_grad (dispatched on its
# arguments' dtypes, in the workers), and a generic step taking `mut opt:
# AdamW[Mlp T]`; the same fns probe an f32 and a bf16 copy of the model
# without training them. N devices against one. The f64 losses print to
# 12 places: f64 rounding is 1.1e-16 per addition and only the order of the
# shares' sums differs. The f32 and bf16 probes print to 4 and 2 places
# (a printed number's last place is added to the tolerance), where the
# order of their sums cannot show; their params never change.
# expect: ok
# tolerance: 1e-12

dim D = 784
dim H = 16
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp T:
    l1: Linear[D H] T
    norm: LayerNorm[H] T
    l2: Linear[H C] T

fn forward(m: Mlp T, x: [b D] T) -> [b C] T:
    let h = layer_norm(linear(m.l1, x), over=H, affine=m.norm)
    return linear(m.l2, gelu(h))

# cross_entropy of bf16 logits is f32 (a half-precision mean is summed in
# f32), of f32 f32 and of f64 f64: f64 holds each.
fn loss(m: Mlp T, x: [b D] T, y: [b] i64) -> f64:
    return to(cross_entropy(forward(m, x), y), f64)

fn step(mut m: Mlp T, mut opt: AdamW[Mlp T], batch: [b] Digit) -> f64:
    let l, g = value_and_grad(loss, m, to(batch.img, T), batch.label)
    update(m, opt, g)
    return l

fn probe(m: Mlp T, batch: [b] Digit) -> (f64, f64):
    let l, g = value_and_grad(loss, m, to(batch.img, T), batch.label)
    return l, to(norm(g), f64)

fn main():
    let data = synthetic_digits(Digit, 48, seed=3)
    let m = Mlp.init(seed=1, dtype=f64)
    let m32 = Mlp.init(seed=1)
    let m16 = Mlp.init(seed=1, dtype=bf16)
    let opt = adamw(m, lr=0.01)
    for batch in data.batches(16):
        let l32, g32 = probe(m32, batch)
        let l16, g16 = probe(m16, batch)
        let l = step(m, opt, batch)
        print(f"{float(l):.12f} {float(l32):.4f} {float(g32):.4f} {float(l16):.2f}")
    print(m.l2.w[0, 0:3], m.norm.g[0:3])
