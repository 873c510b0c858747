# The tutorial's f9 (shard-map.md, all_to_all, split_axis=concat_axis=0,
# tiled): instance i gets element i of every block, so the joined result is
# the 4x4 block matrix of x transposed: [3 5 5 9 1 9 3 7 4 2 5 1 1 6 8 2].
# Untiled over y = arange(32) as [4 8], split by columns (instance k holds
# columns 2k..2k+1, a [4 2] block whose split= axis has size |i|):
# instance i gets row i of every block, stacked, so row k of its result
# is y[i, 2k..2k+1]; joined by columns, the whole result's [k, 2i + c] is
# y[i, 2k + c] = 8i + 2k + c: rows [0 1 8 9 16 17 24 25],
# [2 3 10 11 18 19 26 27], [4 5 12 13 20 21 28 29],
# [6 7 14 15 22 23 30 31].
# expect: ok
# output: [16] f32
# output: [3 5 5 9 1 9 3 7 4 2 5 1 1 6 8 2]
# output: [4 8] f32
# output: [[0 1 8 9 16 17 24 25]
# output:  [2 3 10 11 18 19 26 27]
# output:  [4 5 12 13 20 21 28 29]
# output:  [6 7 14 15 22 23 30 31]]

devices cpu
mesh i=4

spmd fn f9(x: [n/i]) -> [n/i]:
    return all_to_all(x, i, split=n, concat=n)

spmd fn stacked(y: [4 n/i]) -> [4 n/i]:
    return all_to_all(y, i, split=0, concat=0, tiled=false)

fn main():
    let x = tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0,
                    7.0, 1.0, 2.0])
    print(f9(x))
    let y = to(reshape(arange(32), [4, 8]), f32)
    print(stacked(y))
