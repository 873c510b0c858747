# `for blk in m.blocks` over a stacked `[L] Block` under `shard params`
# (issue 25, defect 1): a worker holds a flat piece of each stacked param,
# so the loop's count is the stack's L, read from the param's whole shape,
# not the piece's length (it ran past L: "take_one: index 3 is out of
# range"). Each `blk.w` is gathered whole and its model taken, forward and
# backward; `m.blocks[i]` and `len`-free loops agree with one device.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params

dim D = 4
dim L = 3

model Block:
    w: [D D] = normal(std=0.5)
    b: [D] = zeros()

model Net:
    blocks: [L] Block

fn forward(m: Net, x: [b D]) -> [b D]:
    let h = x
    for blk in m.blocks:
        h = tanh(h @ blk.w + blk.b)
    return h

fn loss(m: Net, x: [b D]) -> f32:
    let y = forward(m, x)
    return mean(y * y)

fn train_step(mut m: Net, mut opt: SGD[Net], x: [b D]) -> Logs:
    let l, g = value_and_grad(loss, m, x)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn second(m: Net, x: [b D]) -> f32:
    return sum(x @ m.blocks[1].w)

fn main():
    let m = Net.init(seed=0)
    let opt = sgd(m, lr=0.1)
    let x = to(reshape(arange(24), [6, D]), f32) / 24.0
    for i in range(3):
        print(train_step(m, opt, x))
    print(float(second(m, x)))
    print(float(sum(m.blocks.w)), float(sum(m.blocks[2].b)))
