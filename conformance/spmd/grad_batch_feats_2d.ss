# A 2-D mesh (the tutorial's FSDP + TP layout, batch=2 feats=2): the batch
# split over batch, the features over feats; the local product is
# psum_scattered over the output features, the squared error psummed over
# feats and the mean pmeaned over batch. Loss and gradient equal the plain
# loss's; numpy, for x = arange(16)/10 and W = (arange(16) - 8)/10 as
# [4 4], y = 1: loss 4.252, dloss/dW = [[-2 -1.48 -0.96 -0.44]
# [-2.28 -1.7 -1.12 -0.54] [-2.56 -1.92 -1.28 -0.64]
# [-2.84 -2.14 -1.44 -0.74]].
# expect: ok
# output: (f32 4.252, [4 4] f32
# output: [[-2 -1.48 -0.96 -0.44]
# output:  [-2.28 -1.7 -1.12 -0.54]
# output:  [-2.56 -1.92 -1.28 -0.64]
# output:  [-2.84 -2.14 -1.44 -0.74]])
# output: (f32 4.252, [4 4] f32
# output: [[-2 -1.48 -0.96 -0.44]
# output:  [-2.28 -1.7 -1.12 -0.54]
# output:  [-2.56 -1.92 -1.28 -0.64]
# output:  [-2.84 -2.14 -1.44 -0.74]])

devices cpu
mesh batch=2 feats=2

dim D = 4
dim H = 4

spmd fn loss_2d(w: [d/feats h], x: [b/batch d/feats], y: [b/batch h/feats]) -> []:
    let e = psum_scatter(x @ w, feats, over=h) - y
    let sq = psum(sum(e * e, over=h), feats)
    return pmean(mean(sq), batch)

fn loss(w: [D H], x: [b D], y: [b H]) -> []:
    let e = x @ w - y
    return mean(sum(e * e, over=H))

fn grads(w: [D H], x: [b D], y: [b H]) -> ((f32, [D H]), (f32, [D H])):
    return value_and_grad(loss, w, x, y), value_and_grad(loss_2d, w, x, y)

fn main():
    let x = to(reshape(arange(16), [4, D]), f32) / 10.0
    let w = (to(reshape(arange(16), [D, H]), f32) - 8.0) / 10.0
    let y = ones([4, H])
    let plain, two_d = grads(w, x, y)
    print(plain)
    print(two_d)
