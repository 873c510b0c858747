# seeds/shard-map.md, "Example 2: psum_scatter the result": lhs and rhs
# both split along the contracting axis; each instance's product is a
# partial sum of the whole result, and psum_scatter adds them up and leaves
# each instance its block of rows.
import "data.ss"

devices cpu
mesh i=4

dim M = 8
dim K = 8
dim N = 4

spmd fn matmul_psumscatter(lhs: [m k/i], rhs: [k/i n]) -> [m/i n]:
    let out_summand = lhs @ rhs
    return psum_scatter(out_summand, i, over=m)

fn main():
    let lhs = reshape(ramp(arange(M * K), 3), [M, K])
    let rhs = reshape(ramp(arange(K * N), 5), [K, N])
    let out = matmul_psumscatter(lhs, rhs)
    let diff = max(abs(out - lhs @ rhs))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_psumscatter.jsonl")
    results.write(logs(out=out, max_abs_diff=diff))
