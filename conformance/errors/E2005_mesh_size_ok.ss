# The fix of E2005_mesh_size.ss: four devices, one per instance, or
# `devices cpu`, which simulates them (the suite runs both).
# expect: ok

devices cpu[0 1 2 3]
mesh x=2 y=2

dim M = 8
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K N], seed=1)
    print(matmul_basic(a, b))
