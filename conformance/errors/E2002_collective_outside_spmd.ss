# A collective in an ordinary fn (docs/errors/E2002.md): outside an spmd
# fn there are no instances to combine.
# expect: error E2002 at 17:12

devices cpu
mesh x=2 y=2

dim M = 8
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

# The sum of the instances' results.
fn total(c: [M N]) -> [M N]:
    return psum(c, x)

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K N], seed=1)
    print(total(matmul_basic(a, b)))
