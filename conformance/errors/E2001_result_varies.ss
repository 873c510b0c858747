# The partial products vary over y, and the result type does not split
# over y: without a psum each instance returns a different block
# (docs/errors/E2001.md).
# expect: error E2001 at 13:12

devices cpu
mesh x=2 y=2

dim M = 8
dim K = 16

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return a @ b

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K 4], seed=1)
    print(matmul_basic(a, b))
