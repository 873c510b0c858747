# seeds/shard-map.md, "Example 1", the overlapped form: all_gather written
# as size - 1 ppermute steps around the ring, each step's multiply by the
# rhs block that just arrived overlapping the next send.
import "data.ss"

devices cpu
mesh i=4

dim M = 8
dim K = 8
dim N = 4

spmd fn matmul_allgather_overlapped(lhs: [m/i k], rhs: [k/i n]) -> [m/i n]:
    let size = axis_size(i)
    let idx = axis_index(i)
    # lhs's columns in |i| = 4 blocks (the tutorial's dynamic_slice_in_dim
    # by B = k / |i|): block j multiplies the rhs block instance j holds.
    let lhs_blocks = reshape(lhs, [m/i 4 k/i])
    let rhs_block = rhs
    let out_block = take(lhs_blocks, idx, over=1) @ rhs_block
    for j in range(1, size):
        rhs_block = ppermute(rhs_block, i, shift=1)
        out_block += take(lhs_blocks, (idx - j) % size, over=1) @ rhs_block
    return out_block

fn main():
    let lhs = reshape(ramp(arange(M * K), 3), [M, K])
    let rhs = reshape(ramp(arange(K * N), 5), [K, N])
    let out = matmul_allgather_overlapped(lhs, rhs)
    let diff = max(abs(out - lhs @ rhs))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_allgather_overlapped.jsonl")
    results.write(logs(out=out, max_abs_diff=diff))
