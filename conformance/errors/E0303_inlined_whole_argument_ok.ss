# The fix of E0303_inlined_whole_argument.ss: twice takes w split over x,
# so each instance hands gather its block. all_gather's result is typed as
# varying over x (spmd.md's table: it keeps the set, as jax's all_gather
# does), so twice averages the equal copies before returning one.
# expect: ok

devices cpu
mesh x=4

dim D = 8
dim F = 4

spmd fn gather(w: [i/x o]) -> [i o]:
    return all_gather(w, x, over=i)

spmd fn twice(w: [D/x F]) -> [D F]:
    return pmean(gather(w) * 2.0, x)

fn use(w: [D F]) -> [D F] = twice(w)
