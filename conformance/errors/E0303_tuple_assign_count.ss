# E0303: a tuple assignment takes a tuple of as many values: `h, c =`
# assigns two, and step gives three. The error is at the value.
# expect: error E0303 at 13:14

dim N = 2

fn step(x: [N], h: [N], c: [N]) -> ([N], [N], [N]):
    return h + x, c, x

fn run(x: [N], h: [N], c: [N]) -> [N]:
    let h2 = h
    let c2 = c
    h2, c2 = step(x, h2, c2)
    return h2 + c2
