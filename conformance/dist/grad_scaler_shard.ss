# grad_scaler.ss with `shard params`: each device holds pieces of the
# params and their gradients, so whether a step found inf or nan is summed
# over the devices (the scaler's found-inf flag through the devices'
# sum_over_pieces, as clip_norm's squares are): every device skips the
# fourth step and halves the scale, as one device does, and the printed
# steps and scales are torch's GradScaler's, by hand (grad_scaler.ss).
# expect: ok
# tolerance: 1e-3
# output: 1 1024.0 false
# output: 2 2048.0 false
# output: 3 2048.0 false
# output: 3 1024.0 true
# output: 4 1024.0 false
# output: 5 2048.0 false

devices cpu
    shard params

dim D = 4
dim C = 3

model Net:
    l: Linear[D C]

fn loss(m: Net, x: [b D], y: [b] i64, k: f32) -> f32:
    return cross_entropy(linear(m.l, x) * k, y)

fn step(mut m: Net, mut opt: SGD[Net], x: [b D], y: [b] i64, k: f32):
    let l, g = value_and_grad(autocast(loss, f16), m, x, y, k, scaler=opt)
    update(m, opt, g)

fn main():
    let m = Net.init(seed=0)
    let opt = grad_scaler(sgd(m, lr=0.1, momentum=0.9), init_scale=1024.0,
                          growth_interval=2)
    let x = ones([6 D])
    let y = tensor([0, 1, 2, 0, 1, 2])
    for k in [1.0, 1.0, 1.0, 100000.0, 1.0]:
        let before = copy(m)
        step(m, opt, x, y, k)
        print(opt.step, opt.loss_scale, all(m.l.w == before.l.w))
    save("ck.safetensors", m, opt)
    let m2, opt2 = load("ck.safetensors", Net, sgd)
    let before = copy(m2)
    step(m2, opt2, x, y, 1.0)
    print(opt2.step, opt2.loss_scale, all(m2.l.w == before.l.w))
