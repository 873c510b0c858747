# The fix of E2003_block_does_not_divide.ss: M = 8 rows, two for each of
# the 4 instances along x.
# expect: ok

devices cpu
mesh x=4 y=2

dim M = 8
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K N], seed=1)
    print(matmul_basic(a, b))
