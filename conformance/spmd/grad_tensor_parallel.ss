# The tutorial's tensor-parallel gemm (gemm_tp) on mesh feats=2: inputs
# split by features, W by its input features and the bias by its output
# features; the local products are psum_scattered over the output features
# (scatter_dimension=1). The loss is taken in ordinary code on the joined
# result, so the gradient runs back through the join, psum_scatter's
# transpose (all_gather) and the blocks' cuts. numpy, for x = arange(12)/10
# as [3 4], W = (arange(16) - 8)/10 as [4 4], bias = [0.1 0.2 0.3 0.4],
# y = 1: loss 2.3568, dloss/dW = [[-1.082667 -0.741333 -0.4 -0.058667]
# [-1.310667 -0.905333 -0.5 -0.094667] [-1.538667 -1.069333 -0.6 -0.130667]
# [-1.766667 -1.233333 -0.7 -0.166667]], the same as the plain loss's.
# expect: ok
# output: (f32 2.357, [4 4] f32
# output: [[-1.083 -0.7413 -0.4 -0.05867]
# output:  [-1.311 -0.9053 -0.5 -0.09467]
# output:  [-1.539 -1.069 -0.6 -0.1307]
# output:  [-1.767 -1.233 -0.7 -0.1667]])
# output: (f32 2.357, [4 4] f32
# output: [[-1.083 -0.7413 -0.4 -0.05867]
# output:  [-1.311 -0.9053 -0.5 -0.09467]
# output:  [-1.539 -1.069 -0.6 -0.1307]
# output:  [-1.767 -1.233 -0.7 -0.1667]])

devices cpu
mesh feats=2

dim D = 4
dim H = 4

spmd fn gemm_tp(x: [b d/feats], w: [d/feats h], bias: [h/feats]) -> [b h/feats]:
    return psum_scatter(x @ w, feats, over=h) + bias

fn loss_tp(w: [D H], bias: [H], x: [b D], y: [b H]) -> []:
    let e = gemm_tp(x, w, bias) - y
    return mean(sum(e * e, over=H))

fn loss(w: [D H], bias: [H], x: [b D], y: [b H]) -> []:
    let e = x @ w + bias - y
    return mean(sum(e * e, over=H))

fn grads(w: [D H], bias: [H], x: [b D], y: [b H]) -> ((f32, [D H]), (f32, [D H])):
    return value_and_grad(loss, w, bias, x, y), value_and_grad(loss_tp, w, bias, x, y)

fn main():
    let x = to(reshape(arange(12), [3, D]), f32) / 10.0
    let w = (to(reshape(arange(16), [D, H]), f32) - 8.0) / 10.0
    let bias = to(arange(H), f32) / 10.0 + 0.1
    let y = ones([3, H])
    let plain, tp = grads(w, bias, x, y)
    print(plain)
    print(tp)
