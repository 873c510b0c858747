# value_and_grad in an ordinary fn called per instance (Note [A gradient
# inside an instance] in ops/registry/mesh_comm.h): the checker types an
# ordinary fn's body without varying sets, so whether w is replicated is
# unknown there. Before, each instance got its own copy's gradient, [5 4]
# and [13 12] here (v = arange(8) + 1 as [4 2], w = [0.5 -1]), where JAX
# sums the replicated w's over x: [18 16]. No silent difference: it is a
# ValueError at the call, the same on cpu and cpu[2], naming the fix
# (grad_local_term_outside.ss computes JAX's value in the spmd fn).
# expect: runtime ValueError

devices cpu
mesh x=2

fn loss(w: [k], v: [n k]) -> f32:
    return sum(v * w) + sum(w * w)

fn grads_here(w: [k], v: [n k]) -> [k]:
    return grad(loss, w, v)

spmd fn grads(w: [k], v: [n/x k]) -> [k]:
    return psum(grads_here(w, v), x)

fn main():
    let v = to(reshape(arange(8), [4, 2]), f32) + 1.0
    let w = tensor([0.5, -1.0])
    print(grads(w, v))
