# A loop carries the varying set round: `out = acc` reads, on the second
# iteration, the acc that the first made vary over x, so out varies over x
# and the return type does not split over it. The checker once typed the
# body once, with acc's set from before the loop, and let this through
# (Note [Loop-carried varying sets]).
# expect: error E2001 at 20:12

devices cpu
mesh x=4

dim M = 8

spmd fn delayed(a: [m]) -> [m]:
    let acc = zeros_like(a)
    let out = zeros_like(a)
    let stage = axis_index(x)
    for j in range(2):
        out = acc
        acc = where(stage == 0, a, acc)
    return out

fn use(a: [M]) -> [M] = delayed(a)
