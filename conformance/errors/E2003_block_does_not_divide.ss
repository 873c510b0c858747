# A whole argument of 6 rows cut over x = 4 instances (docs/errors/E2003.md).
# expect: error E2003 at 17:24

devices cpu
mesh x=4 y=2

dim M = 6
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K N], seed=1)
    print(matmul_basic(a, b))
