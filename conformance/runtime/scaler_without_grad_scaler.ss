# value_and_grad(..., scaler=opt) of an optimizer that grad_scaler did not
# make: there is no scale to scale the loss by (Note [Loss scaling] in
# interp/builtins/grad_scaler.cpp). A ValueError at the call, with what to
# write, on one device and from the workers alike.
# expect: runtime ValueError

dim D = 4
dim C = 3

model Net:
    l: Linear[D C]

fn loss(m: Net, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(linear(m.l, x), y)

fn train_step(mut m: Net, mut opt: SGD[Net], x: [b D], y: [b] i64):
    let l, g = value_and_grad(autocast(loss, f16), m, x, y, scaler=opt)
    update(m, opt, g)

fn main():
    let m = Net.init(seed=0)
    let opt = sgd(m, lr=0.1)
    train_step(m, opt, ones([6 D]), tensor([0, 1, 2, 0, 1, 2]))
