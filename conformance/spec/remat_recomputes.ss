# remat(f) recomputes f's intermediates in the backward pass instead of
# keeping them (spmd.md; Note [Remat] in interp/eval/remat.cpp): f runs
# once in the forward pass, and once more when value_and_grad's backward
# pass reaches it, so its print shows twice; a plain call runs it once.
# The gradient is the same either way: d/dw sum(tanh(w x)) =
# x (1 - tanh(w x)²); with w = [0 0.5 1] and x = [1 2 3]: [1, 2 ·
# (1 - tanh(1)²) = 0.8399486, 3 · (1 - tanh(3)²) = 0.0295981], and the loss
# tanh(0) + tanh(1) + tanh(3) = 1.7566489 (numpy).
# expect: ok
# devices: cpu
# tolerance: 1e-4
# output: layer runs
# output: (f32 1.757, [3] f32
# output: [1 0.8399 0.0296])
# output: layer runs
# output: layer runs
# output: (f32 1.757, [3] f32
# output: [1 0.8399 0.0296])

dim D = 3

fn layer(w: [D], x: [D]) -> []:
    print("layer runs")
    return sum(tanh(w * x))

fn plain(w: [D], x: [D]) -> []:
    return layer(w, x)

fn recomputed(w: [D], x: [D]) -> []:
    let f = remat(layer)
    return f(w, x)

fn main():
    let w = to(arange(D), f32) / 2.0
    let x = to(arange(D), f32) + 1.0
    print(value_and_grad(plain, w, x))
    print(value_and_grad(recomputed, w, x))
