# seeds/shard-map.md, "Example 2", the overlapped form: psum_scatter
# written as size - 1 ppermute steps down the ring; each step adds this
# instance's product for the block of rows that the partial sum in hand is
# bound for.
import "data.ss"

devices cpu
mesh i=4

dim M = 8
dim K = 8
dim N = 4

spmd fn matmul_psumscatter_overlapped(lhs: [m k/i], rhs: [k/i n]) -> [m/i n]:
    let size = axis_size(i)
    let idx = axis_index(i)
    # lhs's rows in |i| = 4 blocks (the tutorial's reshape(size, -1, k)):
    # block j's product is a summand of instance j's result.
    let lhs_blocks = reshape(lhs, [4 m/i k/i])
    let out_summand = take(lhs_blocks, (idx + 1) % size, over=0) @ rhs
    for j in range(1, size):
        out_summand = ppermute(out_summand, i,
                               perm=[(src, (src - 1) % size) for src in range(size)])
        out_summand += take(lhs_blocks, (idx + j + 1) % size, over=0) @ rhs
    return out_summand

fn main():
    let lhs = reshape(ramp(arange(M * K), 3), [M, K])
    let rhs = reshape(ramp(arange(K * N), 5), [K, N])
    let out = matmul_psumscatter_overlapped(lhs, rhs)
    let diff = max(abs(out - lhs @ rhs))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_psumscatter_overlapped.jsonl")
    results.write(logs(out=out, max_abs_diff=diff))
