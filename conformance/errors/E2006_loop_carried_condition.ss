# The `if` reads flag, which the loop's first iteration made vary over x:
# from the second iteration on the instances disagree about the branch,
# and the psum inside it would wait forever. The checker once typed the
# body once and saw an invariant flag (Note [Loop-carried varying sets]).
# expect: error E2006 at 16:12

devices cpu
mesh x=4

dim M = 8

spmd fn total(a: [m]) -> [m]:
    let flag = sum(a) > 0.0
    let out = a
    for j in range(2):
        if flag:
            out = psum(out, x)
        flag = sum(a) + to(axis_index(x), f32) > 0.0
    return psum(out, x)

fn use(a: [M]) -> [M] = total(a)
