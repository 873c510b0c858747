# Model leaves of a value_and_grad inside an spmd fn on mesh x=2 (Note [A
# gradient inside an instance] in ops/registry/mesh_comm.h): a replicated
# model's params, a model whose one field is split (`Net{w/x}`: w's
# blocks vary over x, b is replicated), and a model split whole (`Net/x`). Each replicated param's gradient
# is summed over x, the same on both instances; the split field's is its
# block's. Net's w = [0 0.5 1 1.5], b = 1 - 3·arange(2) = [1 -2]; v =
# [1 2 3 4] split over x. By hand:
# split: L = psum(sum(w v) · sum(b), x) + sum(b²) = 10·(-1) + 5 = -5;
# dL/dw = v·sum(b) = [-1 -2 -3 -4] (joined from the blocks), dL/db =
# sum(w v) + 2b = [12 6].
# replicated: L = psum(sum(v²) · sum(b), x) + sum(w) · sum(b) = 30·(-1) +
# 3·(-1) = -33; dL/dw = sum(b) on every element = [-1 -1 -1 -1], dL/db =
# sum(v²) + sum(w) = [33 33] (instance 0 holds 5 + 3 of it, instance 1
# 25).
# split whole: b's blocks are [1] and [-2]; L = psum(sum(w v) · sum(b), x)
# = 1·1 + 9·(-2) = -17; no param is summed over x: dL/dw = [1 2] and
# [3 4]·(-2), joined [1 2 -6 -8]; dL/db = each block's sum(w v), [1 9].
# Exact in f32 (small integers and halves).
# expect: ok
# output: (f32 -5, [4] f32
# output: [-1 -2 -3 -4], [2] f32
# output: [12 6])
# output: (f32 -33, [4] f32
# output: [-1 -1 -1 -1], [2] f32
# output: [33 33])
# output: (f32 -17, [4] f32
# output: [1 2 -6 -8], [2] f32
# output: [1 9])

devices cpu
mesh x=2

dim N = 4
dim K = 2

model Net:
    w: [N] = zeros()
    b: [K] = zeros()

spmd fn loss_split(m: Net{w/x}, v: [N/x]) -> f32:
    return psum(sum(m.w * v) * sum(m.b), x) + sum(m.b * m.b)

spmd fn grads_split(m: Net{w/x}, v: [N/x]) -> (f32, [N/x], [K]):
    let l, g = value_and_grad(loss_split, m, v)
    return l, g.w, g.b

spmd fn loss_rep(m: Net, v: [n/x]) -> f32:
    return psum(sum(v * v) * sum(m.b), x) + sum(m.w) * sum(m.b)

spmd fn grads_rep(m: Net, v: [n/x]) -> (f32, [N], [K]):
    let l, g = value_and_grad(loss_rep, m, v)
    return l, g.w, g.b

spmd fn loss_all(m: Net/x, v: [N/x]) -> f32:
    return psum(sum(m.w * v) * sum(m.b), x)

spmd fn grads_all(m: Net/x, v: [N/x]) -> (f32, [N/x], [K/x]):
    let l, g = value_and_grad(loss_all, m, v)
    return l, g.w, g.b

fn start(mut m: Net):
    m.w = to(arange(N), f32) / 2.0
    m.b = 1.0 - 3.0 * to(arange(K), f32)

fn main():
    let m = Net.init(seed=0)
    start(m)
    let v = to(arange(N), f32) + 1.0
    print(grads_split(m, v))
    print(grads_rep(m, v))
    print(grads_all(m, v))
