# An spmd fn called from another one is inlined and its result keeps the
# varying set of its body (spmd.md): shifted varies over x, so `rotated`,
# called from ordinary code, returns a value its type calls replicated.
# The E2001 is at rotated's return, not at shifted's: shifted is only ever
# inlined, and an inlined result may vary (the tutorial's spmd_pipeline).
# expect: error E2001 at 18:12

devices cpu
mesh x=4

dim M = 8

spmd fn shifted(a: [m]) -> [m]:
    return a + to(axis_index(x), f32)

spmd fn rotated(a: [m]) -> [m]:
    let r = shifted(a)
    return r

fn use(a: [M]) -> [M] = rotated(a)
