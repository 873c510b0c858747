# The loss of grad_local_term.ss with its replicated term outside the
# psum, as a JAX user writes it: L = psum(sum(v w), x) + sum(w²), the
# same on both instances of x = 2, w replicated and v's rows split over x.
# JAX's gradient of the replicated w (check_vma: psum's transpose is
# pvary, the implicit pvary of w transposes to psum) is the one loss's,
# the same on every instance (Note [A gradient inside an instance] in
# ops/registry/mesh_comm.h). By hand, for v = arange(8) + 1 as [4 2] and
# w = [0.5 -1]: L = 16·0.5 + 20·(-1) + 1.25 = -10.75 and dL/dw = v's
# column sums + 2w = [16 20] + [1 -2] = [17 18]. The same loss computed
# inside a remat'd f (recomputed in the backward pass: Note [Remat in
# instances]) gives the same. Exact in f32 (small integers and halves).
# expect: ok
# output: [x=0] [2] f32 (k=2)
# output: [x=0] [17 18]
# output: [x=1] [2] f32 (k=2)
# output: [x=1] [17 18]
# output: (f32 -10.75, [2] f32
# output: [17 18])
# output: (f32 -10.75, [2] f32
# output: [17 18])

devices cpu
mesh x=2

spmd fn loss(w: [k], v: [n/x k]) -> f32:
    return psum(sum(v * w), x) + sum(w * w)

spmd fn grads(w: [k], v: [n/x k]) -> (f32, [k]):
    let l, g = value_and_grad(loss, w, v)
    print(g)
    return l, g

spmd fn grads_remat(w: [k], v: [n/x k]) -> (f32, [k]):
    let f = remat(loss)
    return value_and_grad(f, w, v)

fn main():
    let v = to(reshape(arange(8), [4, 2]), f32) + 1.0
    let w = tensor([0.5, -1.0])
    print(grads(w, v))
    print(grads_remat(w, v))
