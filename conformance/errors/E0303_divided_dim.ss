# E0303: `S/3` in a type divides the dim S by 3 (Note [Divided dims] in
# ops/core/divided_dim.h), but 3 does not divide S = 8. The pool's and the
# strided conv's results are [b C S/2 S/2]; a size that a stride does not
# divide is a literal.
# expect: error E0303 at 10:60

dim C = 4
dim S = 8

fn down(x: [b C S S], k: [C C 3 3], k1: [C C 1 1]) -> [b C S/3 S/2]:
    let y = max_pool2d(conv2d(x, k, padding=1), 2)
    return y + conv2d(x, k1, stride=2)
