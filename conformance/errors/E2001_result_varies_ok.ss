# The fix of E2001_result_varies.ss: psum over y makes the result the same
# on every instance along y, so [m/x n] describes it.
# expect: ok

devices cpu
mesh x=2 y=2

dim M = 8
dim K = 16

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K 4], seed=1)
    print(matmul_basic(a, b))
