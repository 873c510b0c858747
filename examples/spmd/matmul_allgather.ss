# seeds/shard-map.md, "Example 1: all-gather on one side": lhs split over
# its rows, rhs over its contracting rows; each instance gathers the whole
# rhs and multiplies its lhs rows by it.
import "data.ss"

devices cpu
mesh i=4

dim M = 8
dim K = 8
dim N = 4

spmd fn matmul_allgather(lhs: [m/i k], rhs: [k/i n]) -> [m/i n]:
    let whole_rhs = all_gather(rhs, i, over=k)
    return lhs @ whole_rhs

fn main():
    let lhs = reshape(ramp(arange(M * K), 3), [M, K])
    let rhs = reshape(ramp(arange(K * N), 5), [K, N])
    let out = matmul_allgather(lhs, rhs)
    let diff = max(abs(out - lhs @ rhs))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_allgather.jsonl")
    results.write(logs(out=out, max_abs_diff=diff))
