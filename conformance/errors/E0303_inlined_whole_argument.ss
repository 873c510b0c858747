# Inlined, an spmd fn's parameter axis `i/x` needs an argument split over
# x (spmd.md): here w is the replicated whole [D F], so gather would join
# four whole copies. The checker once took any whole argument for a split
# parameter, as it does from ordinary code (which splits it).
# expect: error E0303 at 18:19

devices cpu
mesh x=4

dim D = 8
dim F = 4

spmd fn gather(w: [i/x o]) -> [i o]:
    return all_gather(w, x, over=i)

spmd fn twice(w: [D F]) -> [D F]:
    # `gather` wants a block of w's rows; w here is whole on every instance.
    return gather(w) * 2.0

fn use(w: [D F]) -> [D F] = twice(w)
