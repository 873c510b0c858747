# spmd.md, "Specs in types": matmul_basic on a 4x2 mesh, simulated on cpu.
# expect: ok

devices cpu
mesh x=4 y=2

dim M = 16
dim K = 8
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

fn main():
    let a = randn([M, K], seed=0)
    let b = randn([K, N], seed=1)
    let c = matmul_basic(a, b)
    print(c)
