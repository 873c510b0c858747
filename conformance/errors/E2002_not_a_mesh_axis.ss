# psum names the tensor axis k, not the mesh axis y that k is split over
# (docs/errors/E2002.md): a collective's axis is a mesh axis.
# expect: error E2002 at 13:24

devices cpu
mesh x=2 y=2

dim M = 8
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, k)

fn main():
    let a = randn([M K], seed=0)
    let b = randn([K N], seed=1)
    print(matmul_basic(a, b))
