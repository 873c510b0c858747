# The tutorial's 8-way data parallel loss (loss_dp) on mesh batch=4: the
# plain loss on each instance's rows, pmean over batch. Its value and
# gradient equal the single-device loss's; numpy, for x = arange(24)/10 as
# [8 3], w = (arange(6) - 2)/5 as [3 2] and y = 0.5: loss 0.4194, gradient
# [[-0.882 1.134] [-0.966 1.188] [-1.05 1.242]].
# expect: ok
# output: (f32 0.4194, [3 2] f32
# output: [[-0.882 1.134]
# output:  [-0.966 1.188]
# output:  [-1.05 1.242]])
# output: (f32 0.4194, [3 2] f32
# output: [[-0.882 1.134]
# output:  [-0.966 1.188]
# output:  [-1.05 1.242]])

devices cpu
mesh batch=4

dim D = 3
dim C = 2

fn loss(w: [D C], x: [b D], y: [b C]) -> []:
    let e = x @ w - y
    return mean(sum(e * e, over=C))

spmd fn loss_dp(w: [D C], x: [b/batch D], y: [b/batch C]) -> []:
    return pmean(loss(w, x, y), batch)

fn grads(w: [D C], x: [b D], y: [b C]) -> ((f32, [D C]), (f32, [D C])):
    return value_and_grad(loss, w, x, y), value_and_grad(loss_dp, w, x, y)

fn main():
    let x = to(reshape(arange(24), [8, D]), f32) / 10.0
    let w = (to(reshape(arange(6), [D, C]), f32) - 2.0) / 5.0
    let y = ones([8, C]) * 0.5
    let plain, dp = grads(w, x, y)
    print(plain)
    print(dp)
