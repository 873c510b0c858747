# Gradients taken inside an spmd fn of a loss invariant over the mesh
# (Note [A gradient inside an instance] in ops/registry/mesh_comm.h):
# `total` is psum(sum(a²), x) over a's blocks, one loss whose gradient
# w.r.t. each block is 2a there: [0 2 4 6] for a = [0 1 2 3] (by hand;
# on cpu[2] each worker's seed was once summed by psum's transpose, twice
# that). `sq` of the replicated w = [1 -2 3] runs no collective: the one
# loss 14 and its gradient 2w = [2 -4 6] on every instance (by hand),
# neither halved nor summed twice.
# expect: ok
# output: ([4] f32
# output: [0 2 4 6], f32 14, [3] f32
# output: [2 -4 6])

devices cpu
mesh x=2

fn sq(w: [k]) -> f32:
    return sum(w * w)

spmd fn total(a: [n/x]) -> f32:
    return psum(sum(a * a), x)

spmd fn grads(a: [n/x], w: [k]) -> ([n/x], f32, [k]):
    let ga = grad(total, a)
    let l, gw = value_and_grad(sq, w)
    return ga, l, gw

fn main():
    let a = to(arange(4), f32)
    let w = tensor([1.0, -2.0, 3.0])
    print(grads(a, w))
