# A worker fn that assigns fields of its `mut` model under `shard params`
# (issue 25, defect 2): an EMA of another model, a hand-written SGD step,
# and one model of a stack. The new value is whole (the program's view);
# each worker keeps its piece of it, so the next read gathers the new
# param (it failed: "field `w` is [8], the new value [4 4]"). One model of
# a stack is written into the whole stacked param (gathered, replaced, cut
# again). The values are one device's, which is the hand computation
# w <- 0.9 w + 0.1 v, then w <- w - 0.5 g.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params

dim D = 4
dim L = 2

model M:
    w: [D D] = normal(std=0.5)
    b: [D] = ones()

model Stack:
    layers: [L] M

fn ema(mut m: M, v: M, x: [b D]) -> f32:
    m.w = m.w * 0.9 + v.w * 0.1
    m.b = m.b * 0.9
    return mean(x @ m.w + m.b)

fn loss(m: M, x: [b D]) -> f32:
    return mean((x @ m.w + m.b) * (x @ m.w + m.b))

fn sgd_by_hand(mut m: M, x: [b D]) -> f32:
    let l, g = value_and_grad(loss, m, x)
    m.w = m.w - 0.5 * g.w
    m.b = m.b - 0.5 * g.b
    return l

fn scale_layer(mut s: Stack, x: [b D]) -> f32:
    s.layers[1].w = s.layers[1].w * 2.0
    let h = x
    for layer in s.layers:
        h = h @ layer.w + layer.b
    return mean(h)

fn main():
    let m = M.init(seed=0)
    let v = M.init(seed=1)
    let s = Stack.init(seed=2)
    let x = to(reshape(arange(24), [6, D]), f32) / 24.0
    for i in range(3):
        print(ema(m, v, x))
        print(sgd_by_hand(m, x))
        print(scale_layer(s, x))
    print(float(sum(m.w)), float(sum(m.b)))
    print(float(sum(s.layers.w)), float(sum(s.layers[0].w)))
