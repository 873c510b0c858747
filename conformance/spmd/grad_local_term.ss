# A loss invariant over the mesh with a term of replicated values written
# inside the collective and divided by the axis size: L = psum(sum(v w) +
# sum(w²) / |x|, x) is sum over v's rows of v·w plus w·w, the same loss as
# grad_local_term_outside.ss's. By hand, for v = arange(8) + 1 as [4 2]
# (rows split over x = 2) and the replicated w = [0.5 -1]: L = 16·0.5 +
# 20·(-1) + 1.25 = -10.75 and dL/dw = v's column sums + 2w = [17 18],
# the same on every instance (JAX's gradient of a replicated leaf: the
# sum of the instances' [4.5 5] and [12.5 13]; Note [A gradient inside an
# instance] in ops/registry/mesh_comm.h), so psum of it over x doubles
# it, [34 36], as JAX's psum of an invariant value does.
# The varying v's gradient of the loss written with the term outside the
# psum is w on every row (the term does not reach v). The loss psum(
# sum(a²), x) made invariant inside a remat'd fn is differentiated too:
# 2a = [0 2 4 6] for a = [0 1 2 3], by hand. Exact in f32 (small
# integers and halves).
# expect: ok
# output: (f32 -10.75, [2] f32
# output: [34 36])
# output: [4 2] f32
# output: [[0.5 -1]
# output:  [0.5 -1]
# output:  [0.5 -1]
# output:  [0.5 -1]]
# output: [4] f32
# output: [0 2 4 6]

devices cpu
mesh x=2

spmd fn loss(w: [k], v: [n/x k]) -> f32:
    return psum(sum(v * w) + sum(w * w) / to(axis_size(x), f32), x)

spmd fn grads(w: [k], v: [n/x k]) -> (f32, [k]):
    let l, g = value_and_grad(loss, w, v)
    return l, psum(g, x)

spmd fn loss_v(v: [n/x k], w: [k]) -> f32:
    return psum(sum(v * w), x) + sum(w * w)

spmd fn grad_v(w: [k], v: [n/x k]) -> [n/x k]:
    return grad(loss_v, v, w)

spmd fn total(a: [n/x]) -> f32:
    return psum(sum(a * a), x)

spmd fn grad_remat(a: [n/x]) -> [n/x]:
    let f = remat(total)
    return grad(f, a)

fn main():
    let v = to(reshape(arange(8), [4, 2]), f32) + 1.0
    let w = tensor([0.5, -1.0])
    print(grads(w, v))
    print(grad_v(w, v))
    print(grad_remat(to(arange(4), f32)))
