# Deterministic mode with a mesh (docs/errors/E2005.md): the spmd fns'
# collectives add in an order the mesh's layout decides, so the mode
# refuses a mesh on every device list alike.
# expect: error E2005 at 7:5

devices cpu
    deterministic

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
