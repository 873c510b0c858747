# Gradients inside an spmd fn on a 2-D mesh x=2 y=2 (Note [A gradient
# inside an instance] in ops/registry/mesh_comm.h): a leaf is summed over
# the mesh axes it is replicated over, and only those.
# ga: a = [1 2 3 4] is split over x only (its copies along y tied), u =
# [1 2 3 4] over y only; L = psum over x and y of sum(a_i²)·sum(u_j) =
# sum(a²)·sum(u) = 30·10 = 300 and dL/da = 2a·sum(u) = [20 40 60 80]
# (by hand): instance (i, j) holds 2a_i·sum(u_j) of it before the sum
# over y, [6 12] and [14 28] for i = 0, so every instance of x=0 prints
# [20 40] and of x=1 [60 80].
# gw: the replicated w = [0.5 -1] with a term u2·w outside the psum over
# x (u2 = [[1 -1] [2 0.5]] split over y, v = arange(8) + 1 as [4 2]
# split over (x y)): L = psum(psum(sum(v w), x) + sum(u2 w), y) is
# sum(v w) + sum(u2 w) = -10 and dL/dw = v's column sums + u2's =
# [16 20] + [3 -0.5] = [19 19.5] (numpy), JAX's, summed over both axes.
# Exact in f32 (small integers and halves).
# expect: ok
# output: [x=0 y=0] [2] f32 (n=2)
# output: [x=0 y=0] [20 40]
# output: [x=0 y=1] [2] f32 (n=2)
# output: [x=0 y=1] [20 40]
# output: [x=1 y=0] [2] f32 (n=2)
# output: [x=1 y=0] [60 80]
# output: [x=1 y=1] [2] f32 (n=2)
# output: [x=1 y=1] [60 80]
# output: (f32 300, [4] f32
# output: [20 40 60 80])
# output: (f32 -10, [2] f32
# output: [19 19.5])

devices cpu
mesh x=2 y=2

spmd fn products(a: [n/x], u: [m/y]) -> f32:
    return psum(psum(sum(a * a) * sum(u), x), y)

spmd fn ga(a: [n/x], u: [m/y]) -> (f32, [n/x]):
    let l, g = value_and_grad(products, a, u)
    print(g)
    return l, g

spmd fn local(w: [k], v: [r/(x y) k], u2: [q/y k]) -> f32:
    return psum(psum(sum(v * w), x) + sum(u2 * w), y)

spmd fn gw(w: [k], v: [r/(x y) k], u2: [q/y k]) -> (f32, [k]):
    return value_and_grad(local, w, v, u2)

fn main():
    let a = to(arange(4), f32) + 1.0
    let u = to(arange(4), f32) + 1.0
    print(ga(a, u))
    let v = to(reshape(arange(8), [4, 2]), f32) + 1.0
    let u2 = tensor([[1.0, -1.0], [2.0, 0.5]])
    print(gw(tensor([0.5, -1.0]), v, u2))
