# Training through an spmd fn on the workers: three SGD steps (lr 0.1) of
# a worker fn whose value_and_grad differentiates the data-parallel loss
# (loss_dp: each instance's rows, pmean over batch), the model updated in
# place on every worker. numpy, for x = arange(12)/10 as [4 3], y = 0.5
# and w from zeros: losses 0.5, 0.337831, 0.246955 and w's rows 0.101859,
# 0.126761, 0.151662 (both columns alike), printed to ss's 4 digits. On
# cpu[2] every worker's copy of the model must stay rank 0's, bit for bit
# (conformance/README.md): each worker's gradient is the whole one.
# expect: ok
# output: f32 0.5
# output: f32 0.3378
# output: f32 0.247
# output: [3 2] f32
# output: [[0.1019 0.1019]
# output:  [0.1268 0.1268]
# output:  [0.1517 0.1517]]

devices cpu
mesh batch=2

dim D = 3
dim C = 2

model Lin:
    w: [D C] = zeros()

fn loss(m: Lin, x: [n D], y: [n C]) -> []:
    let e = x @ m.w - y
    return mean(sum(e * e, over=C))

spmd fn loss_dp(m: Lin, x: [n/batch D], y: [n/batch C]) -> []:
    return pmean(loss(m, x, y), batch)

fn step(mut m: Lin, mut opt: SGD[Lin], x: [n D], y: [n C]) -> []:
    let l, g = value_and_grad(loss_dp, m, x, y)
    update(m, opt, g)
    return l

fn main():
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.1)
    let x = to(reshape(arange(12), [4, D]), f32) / 10.0
    let y = ones([4, C]) * 0.5
    for i in range(3):
        print(step(m, opt, x, y))
    print(m.w)
