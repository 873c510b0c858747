# The fix for E0306_einsum_literal: the pair axis is labelled `p`, and
# contracted with D since the output leaves both out.
# expect: ok

dim D = 8

fn pair_scores(a: [2 n D], c: [2 t D]) -> [n t]:
    return einsum(a, c, p n D, p t D -> n t)
