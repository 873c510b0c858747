# E0310: value_and_grad differentiates `loss`, which reaches the extern fn
# `floor_div` (through `quantize` and `forward`), and nn's floordiv
# registered no VJP: there is no gradient to propagate through it.
# expect: error E0310 at 31:16

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

extern fn floor_div(a: [*s], b: [*s]) -> [*s] = "nn.floordiv"

# Weights rounded down to a grid of 1/64 (quantization-aware training).
fn quantize(w: [i o]) -> [i o]:
    return floor_div(w * 64.0, ones_like(w)) / 64.0

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ quantize(m.w1)) @ quantize(m.w2)

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)
