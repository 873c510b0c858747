# psum_scatter along a block's second axis (the TP example's
# scatter_dimension=1) on mesh b=2 f=2: y = arange(16) as [4 4], split by
# rows over b. s = psum(y, b) is [[0 1 2 3] [4 5 6 7]] + [[8 9 10 11]
# [12 13 14 15]] = [[8 10 12 14] [16 18 20 22]] on every instance, the same
# along f; psum_scatter over f sums the two instances' copies (2 s, as
# psum_scatter_ref sums every block) and instance f keeps columns 2f..2f+1;
# the result joins them along f: [[16 20 24 28] [32 36 40 44]].
# expect: ok
# output: [2 4] f32 (r=2 c=4)
# output: [[16 20 24 28]
# output:  [32 36 40 44]]

devices cpu
mesh b=2 f=2

spmd fn scatter_cols(y: [m/b n]) -> [r c/f]:
    return psum_scatter(psum(y, b), f, over=n)

fn main():
    let y = to(reshape(arange(16), [4, 4]), f32)
    print(scatter_cols(y))
