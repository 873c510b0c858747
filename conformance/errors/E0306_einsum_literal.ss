# E0306: a literal other than 1 in an einsum input has no label, so einsum
# can neither keep it nor sum it (nor contract it with another operand's
# axis of the same size). Name the axis: a label left out of the output is
# summed.
# expect: error E0306 at 10:25

dim D = 8

fn pair_scores(a: [2 n D], c: [2 t D]) -> [n t]:
    return einsum(a, c, 2 n D, 2 t D -> n t)
