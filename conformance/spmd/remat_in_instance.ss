# remat(f) inside an spmd fn recomputes f in the backward pass (spmd.md;
# Note [Remat in instances] in interp/eval/spmd/remat_instances.cpp; on
# workers Note [Spmd fns on workers]), its collectives included, here for
# a value_and_grad inside the spmd fn: every instance runs f with the
# others once in the forward pass and once more in value_and_grad's
# backward pass, so f's prints (and the ordinary fn it calls) show twice per
# instance, in order with the forward's; differentiated plainly they show
# once. On cpu[2] each worker's backward pass runs the recompute's
# all_gathers with the other's. The values are the same either way, and
# the loss's (invariant over x) gradient is counted once, not once per
# instance (Note [A gradient inside an instance]): w = [0 0.5 1 1.5],
# v = [1 2 3 4] split over x = 2; each instance all-gathers both and
# computes sum(tanh(w v)) / 2, psum adds the two halves: sum(tanh([0 1 3
# 6])) = 2.7566366, and d/dw = v (1 - tanh(w v)²) = [1, 0.8399487,
# 0.0295981, 0.0000983] (numpy, f64); each instance returns its block of
# it. Tolerance 1e-4: f32's 1 - tanh(6)² keeps three digits (9.823e-05).
# expect: ok
# tolerance: 1e-4
# output: [x=0] gathered runs
# output: [x=1] gathered runs
# output: [x=0] layer runs
# output: [x=1] layer runs
# output: (f32 2.757, [4] f32
# output: [1 0.8399 0.0296 9.83e-05])
# output: [x=0] gathered runs
# output: [x=1] gathered runs
# output: [x=0] layer runs
# output: [x=1] layer runs
# output: [x=0] gathered runs
# output: [x=1] gathered runs
# output: [x=0] layer runs
# output: [x=1] layer runs
# output: (f32 2.757, [4] f32
# output: [1 0.8399 0.0296 9.83e-05])

devices cpu
mesh x=2

dim N = 4

fn layer(w: [n], v: [n]) -> f32:
    print("layer runs")
    return sum(tanh(w * v))

spmd fn gathered(w: [n/x], v: [n/x]) -> f32:
    let whole_w = all_gather(w, x, over=n)
    let whole_v = all_gather(v, x, over=n)
    print("gathered runs")
    return layer(whole_w, whole_v) / 2.0

spmd fn loss_plain(w: [n/x], v: [n/x]) -> f32:
    return psum(gathered(w, v), x)

spmd fn loss(w: [n/x], v: [n/x]) -> f32:
    let f = remat(gathered)
    return psum(f(w, v), x)

spmd fn grads_plain(w: [n/x], v: [n/x]) -> (f32, [n/x]):
    return value_and_grad(loss_plain, w, v)

spmd fn grads(w: [n/x], v: [n/x]) -> (f32, [n/x]):
    return value_and_grad(loss, w, v)

fn main():
    let w = to(arange(N), f32) / 2.0
    let v = to(arange(N), f32) + 1.0
    print(grads_plain(w, v))
    print(grads(w, v))
