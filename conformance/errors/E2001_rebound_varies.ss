# `=` rebinding a local with a value that varies over x makes the local
# vary over x from there on (spmd.md: its varying set may grow): the result
# is only instance 0's a on instance 0, zeros elsewhere, and the return
# type does not split over x. The checker once kept the `let`'s empty set
# and let this through.
# expect: error E2001 at 17:12

devices cpu
mesh x=4

dim M = 8

spmd fn first_instance_only(a: [m]) -> [m]:
    let stage = axis_index(x)
    let out = zeros_like(a)
    out = where(stage == 0, a, out)
    return out

fn use(a: [M]) -> [M] = first_instance_only(a)
