# A model spec splits its fields (spmd.md, "Specs in types"): with
# `m: Lin/x` each instance's m.w is a block [D/x F] that varies over x, so
# returning it as the whole [D F] is wrong (all_gather it over D to get
# the whole). The checker once ignored model specs and let this through.
# expect: error E0303 at 17:12

devices cpu
mesh x=4

dim D = 8
dim F = 4

model Lin:
    w: [D F] = zeros()

spmd fn weights(m: Lin/x) -> [D F]:
    return m.w

fn use(m: Lin) -> [D F] = weights(m)
