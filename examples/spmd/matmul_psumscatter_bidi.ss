# seeds/shard-map.md, "Example 2", the bidirectional form: the result
# block's two halves are accumulated on two rings, one going up and one
# going down, and joined at the end.
import "data.ss"

devices cpu
mesh i=4

dim M = 8
dim K = 8
dim N = 4

spmd fn matmul_psumscatter_overlapped_bidi(lhs: [m k/i], rhs: [k/i n]) -> [m/i n]:
    let size = axis_size(i)
    let idx = axis_index(i)
    # lhs's rows in |i| = 4 blocks, each in a low and a high half (the
    # tutorial's dynamic_slice_in_dim by (2 i + hi) B, B = m / |i| / 2).
    let lhs_lo, lhs_hi = split(reshape(lhs, [4 m/i k/i]), s (2 mh) kb -> s mh kb)
    let lo = take(lhs_lo, (idx - 1) % size, over=0) @ rhs
    let hi = take(lhs_hi, (idx + 1) % size, over=0) @ rhs
    for j in range(1, size):
        lo = ppermute(lo, i, shift=1)
        hi = ppermute(hi, i, perm=[(src, (src - 1) % size) for src in range(size)])
        lo += take(lhs_lo, (idx - j - 1) % size, over=0) @ rhs
        hi += take(lhs_hi, (idx + j + 1) % size, over=0) @ rhs
    # The halves joined are the block: [mh n] twice is [m/i n].
    return reshape(concat([lo, hi], over=0), [m/i n])

fn main():
    let lhs = reshape(ramp(arange(M * K), 3), [M, K])
    let rhs = reshape(ramp(arange(K * N), 5), [K, N])
    let out = matmul_psumscatter_overlapped_bidi(lhs, rhs)
    let diff = max(abs(out - lhs @ rhs))
    print(f"max_abs_diff {diff}")
    let results = jsonl("matmul_psumscatter_bidi.jsonl")
    results.write(logs(out=out, max_abs_diff=diff))
