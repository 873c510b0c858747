# The fix of E0303_tuple_assign_count.ss: as many names as values, `_` for
# one not kept.
# expect: ok

dim N = 2

fn step(x: [N], h: [N], c: [N]) -> ([N], [N], [N]):
    return h + x, c, x

fn run(x: [N], h: [N], c: [N]) -> [N]:
    let h2 = h
    let c2 = c
    h2, c2, _ = step(x, h2, c2)
    return h2 + c2
