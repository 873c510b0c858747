# The tutorial's first shard_map (seeds/shard-map.md, "So, let's see a
# shard_map!"): a's rows split over x and its columns over y, b's rows over
# y; each instance multiplies its blocks and psum over y adds the partial
# products, so every instance along y holds the same block of c's rows.
devices cpu
mesh x=4 y=2

dim M = 8
dim K = 16
dim N = 4

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    # a: [2 8] and b: [8 4] blocks; the partial sum varies over x and y.
    let c_partialsum = a @ b
    return psum(c_partialsum, y)

fn main():
    # The tutorial's data: a = arange(8 * 16).reshape(8, 16), b likewise.
    let a = reshape(to(arange(M * K), f32), [M, K])
    let b = reshape(to(arange(K * N), f32), [K, N])
    let c = matmul_basic(a, b)
    let diff = max(abs(c - a @ b))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_basic.jsonl")
    results.write(logs(out=c, max_abs_diff=diff))
