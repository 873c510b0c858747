# The fix of E0101_tuple_augmented.ss: each on its own line, or `=` with
# the sums written out.
# expect: ok

dim N = 2

fn run(x: [N], h: [N], c: [N]) -> [N]:
    let h2 = h
    let c2 = c
    h2, c2 = h2 + x, c2 + x
    return h2 + c2
