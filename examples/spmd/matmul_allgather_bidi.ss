# seeds/shard-map.md, "Example 1", the bidirectional form: each rhs block
# is cut in halves; the low halves travel up the ring and the high halves
# down, so both directions of every link carry data.
import "data.ss"

devices cpu
mesh i=4

dim M = 8
dim K = 8
dim N = 4

spmd fn matmul_allgather_overlapped_bidi(lhs: [m/i k], rhs: [k/i n]) -> [m/i n]:
    let size = axis_size(i)
    let idx = axis_index(i)
    # lhs's columns in |i| = 4 blocks, each in two halves (the tutorial's
    # dynamic_slice_in_dim by (2 i + hi) B, B = k / |i| / 2); the rhs block
    # in the same two halves.
    let rhs_lo, rhs_hi = split(rhs, (2 kh) n -> kh n)
    let lhs_blocks = reshape(lhs, [m/i 4 2 kh])
    let out_block = take(take(lhs_blocks, idx, over=1), 0, over=1) @ rhs_lo
    out_block += take(take(lhs_blocks, idx, over=1), 1, over=1) @ rhs_hi
    for j in range(1, size):
        rhs_lo = ppermute(rhs_lo, i, shift=1)
        rhs_hi = ppermute(rhs_hi, i,
                          perm=[(src, (src - 1) % size) for src in range(size)])
        out_block += take(take(lhs_blocks, (idx - j) % size, over=1), 0,
                          over=1) @ rhs_lo
        out_block += take(take(lhs_blocks, (idx + j) % size, over=1), 1,
                          over=1) @ rhs_hi
    return out_block

fn main():
    let lhs = reshape(ramp(arange(M * K), 3), [M, K])
    let rhs = reshape(ramp(arange(K * N), 5), [K, N])
    let out = matmul_allgather_overlapped_bidi(lhs, rhs)
    let diff = max(abs(out - lhs @ rhs))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_allgather_bidi.jsonl")
    results.write(logs(out=out, max_abs_diff=diff))
