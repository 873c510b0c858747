# The fix of E2005_deterministic_mesh.ss: the mesh without
# `deterministic`.
# expect: ok

devices cpu
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
