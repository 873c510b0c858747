# E0101: `a, b += ...` does not parse: a tuple is assigned with `=` only,
# each target a name or a field.
# expect: error E0101 at 9:5

dim N = 2

fn run(x: [N], h: [N], c: [N]) -> [N]:
    let h2 = h
    h2, c += x, x
    return h2
