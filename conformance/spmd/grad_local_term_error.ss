# The loss of grad_local_term.ss with its replicated term outside the
# psum: L = psum(sum(v w), x) + sum(w²) is invariant over x, but sum(w²)
# reaches the leaf w through no collective over x, so no seed of the
# instances' copies gives the one loss's gradient in both modes (Note
# [Local terms of an invariant loss] in ops/autodiff/tape.cpp): the
# simulated mode gave [18 16] after psum of the gradients, where JAX's
# gradient is [17 18] (by hand: v's column sums [16 20] + 2w), and the
# instances' gradients differed between cpu and cpu[2]. It is refused at
# the value_and_grad call, the same ValueError on cpu and cpu[2], naming
# the rewrite (grad_local_term.ss gives [17 18] with it).
# expect: runtime ValueError

devices cpu
mesh x=2

spmd fn loss(w: [k], v: [n/x k]) -> f32:
    return psum(sum(v * w), x) + sum(w * w)

spmd fn grads(w: [k], v: [n/x k]) -> (f32, [k]):
    let l, g = value_and_grad(loss, w, v)
    return l, psum(g, x)

fn main():
    let v = to(reshape(arange(8), [4, 2]), f32) + 1.0
    let w = tensor([0.5, -1.0])
    print(grads(w, v))
