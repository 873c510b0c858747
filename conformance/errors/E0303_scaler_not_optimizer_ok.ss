# E0303 fixed: value_and_grad's scaler= is the optimizer that carries the grad
# scaler (Note [Loss scaling] in interp/builtins/grad_scaler.cpp), not a
# number: torch's scaler.scale(loss) becomes scaler=opt.
# expect: ok
# On several devices each rounds its share's f16 gradients apart: f16's
# units (2**-11), not f32's (conformance/dist/grad_scaler.ss).
# tolerance: 1e-3
# output: 1 65536.0

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
    let opt = grad_scaler(sgd(m, lr=0.1))
    train_step(m, opt, ones([6 D]), tensor([0, 1, 2, 0, 1, 2]))
    print(opt.step, opt.loss_scale)
