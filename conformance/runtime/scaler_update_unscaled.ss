# update with an optimizer that carries a grad scaler, of gradients that
# no value_and_grad(..., scaler=opt) took: they were never scaled, so the
# scaler has nothing to unscale or check (Note [Loss scaling] in
# interp/builtins/grad_scaler.cpp). A ValueError at the update, not a step
# the scaler did not govern.
# expect: runtime ValueError

dim D = 4
dim C = 3

model Net:
    l: Linear[D C]

fn loss(m: Net, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(linear(m.l, x), y)

fn train_step(mut m: Net, mut opt: SGD[Net], x: [b D], y: [b] i64):
    let l, g = value_and_grad(autocast(loss, f16), m, x, y)
    update(m, opt, g)

fn main():
    let m = Net.init(seed=0)
    let opt = grad_scaler(sgd(m, lr=0.1))
    train_step(m, opt, ones([6 D]), tensor([0, 1, 2, 0, 1, 2]))
