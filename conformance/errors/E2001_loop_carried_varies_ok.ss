# The fix of E2001_loop_carried_varies.ss: psum over x gives every
# instance the same sum, instance 0's a (the others hold zeros).
# expect: ok

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
    return psum(out, x)

fn use(a: [M]) -> [M] = delayed(a)
