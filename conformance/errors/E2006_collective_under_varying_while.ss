# A loop whose condition differs from instance to instance, with a psum in
# its body.
# expect: error E2006 at 12:11

devices cpu
mesh x=4

dim M = 16

spmd fn shrink(a: [m/x]) -> [m/x]:
    let v = a
    while sum(v, over=m) > 1.0:
        v = v / psum(sum(v, over=m), x)
    return v

fn main():
    print(shrink(randn([M], seed=0)))
