# The fix of E2001_through_inlined_call.ss: the inlined result varies over
# x and the caller reduces it before returning, as the tutorial's loss_pp
# pmeans what spmd_pipeline returns. shifted itself is not an E2001: it is
# only called from spmd fns.
# expect: ok

devices cpu
mesh x=4

dim M = 8

spmd fn shifted(a: [m]) -> [m]:
    return a + to(axis_index(x), f32)

spmd fn rotated(a: [m]) -> [m]:
    let r = shifted(a)
    return pmean(r, x)

fn use(a: [M]) -> [M] = rotated(a)
