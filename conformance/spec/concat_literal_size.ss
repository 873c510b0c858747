# library.md: concat gives its new axis a literal size when every size is
# static (two [A 4] along B are [A 8]), else a fresh size variable. Before, a list literal's items were not counted and the result
# was [A m], so the signature below was E0303.
# expect: ok

dim A = 3
dim B = 4

fn joined(x: [A B], y: [A B]) -> [A 8]:
    return concat([x, y], over=B)

fn three(x: [A B]) -> [A 12]:
    return concat((x, x, x), over=B)

fn main():
    let x = ones([A B])
    print(typeof(joined(x, x * 2.0)), float(sum(joined(x, x * 2.0))))
    print(typeof(three(x)))
