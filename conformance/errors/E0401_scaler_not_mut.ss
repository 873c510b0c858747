# E0401: value_and_grad(..., scaler=opt) records in opt whether the
# gradients overflowed (Note [Loss scaling] in
# interp/builtins/grad_scaler.cpp), so opt must be a `mut` parameter.
# expect: error E0401 at 17:68

dim D = 4
dim C = 3

model Net:
    l: Linear[D C]

fn loss(m: Net, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(linear(m.l, x), y)

fn grads(m: Net, opt: SGD[Net], x: [b D], y: [b] i64) -> Grads[Net]:
    # opt is not mut here
    let l, g = value_and_grad(autocast(loss, f16), m, x, y, scaler=opt)
    return g

fn main():
    let m = Net.init(seed=0)
    let opt = grad_scaler(sgd(m, lr=0.1))
    print(norm(grads(m, opt, ones([6 D]), tensor([0, 1, 2, 0, 1, 2]))))
