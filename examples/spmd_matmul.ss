# spmd.md's basic matmul: a's rows are split over mesh axis x and its columns
# (the contracted axis) over y; each instance multiplies its blocks and psum
# adds the partial products over y. With `devices cpu` the 2x2 mesh is
# simulated in one process; `--devices 'cpu[0 1 2 3]'` runs it on 4 workers.

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
    let c = matmul_basic(a, b)
    print(c)
    print(max(abs(c - a @ b)))
