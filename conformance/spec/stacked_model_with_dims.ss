# A stacked sub-model whose model takes dims: `inner: [L] Layer[F F]`
# (language.md: `blocks: [L] Block` stacks L sub-models, every field
# getting a leading L axis; `Dense[D Hd]` gives a model its dims; the two
# compose). Each layer's w is ones([F F]) and b ones([F]), so h @ w + b
# adds h's two entries and 1: x = [1 2] -> [4 4] -> [9 9] -> [19 19]
# (by hand); the stack's w is [L F F], a layer's [F F]. A fn takes the
# stack as `[L] Layer[F F]` too.
# expect: ok
# devices: cpu
# output: [2] f32
# output: [19 19]
# output: [L F F]
# output: [F F]

dim L = 3
dim F = 2

model Layer[I O]:
    w: [I O] = ones()
    b: [O] = ones()

model Net:
    inner: [L] Layer[F F]

fn run_stack(s: [L] Layer[F F], x: [F]) -> [F]:
    let h = x
    for l in s:
        h = h @ l.w + l.b
    return h

fn main():
    let m = Net.init(seed=0)
    print(run_stack(m.inner, to(arange(F), f32) + 1.0))
    print(typeof(m.inner.w))
    print(typeof(m.inner[1].w))
