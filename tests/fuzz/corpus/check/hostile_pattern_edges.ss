fn f(x: [a b c]) -> [a (b c)]:
    return rearrange(x, a b c -> a (b c))
fn g(x: [a b]) -> [b a]:
    return einsum(x, a b -> b a ((((((
