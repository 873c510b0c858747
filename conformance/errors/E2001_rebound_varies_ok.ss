# The fix of E2001_rebound_varies.ss: psum over x hands every instance
# instance 0's a (the others contribute zeros), the same on each.
# expect: ok

devices cpu
mesh x=4

dim M = 8

spmd fn first_instance_only(a: [m]) -> [m]:
    let stage = axis_index(x)
    let out = zeros_like(a)
    out = where(stage == 0, a, out)
    return psum(out, x)

fn use(a: [M]) -> [M] = first_instance_only(a)
