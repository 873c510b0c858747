# all_to_all with tiled=false and split= another axis than concat= (spmd.md;
# jax.lax.all_to_all): split= (of size |i|) goes, each instance's piece k
# is its block's entry k along it, and the pieces received are stacked
# along a new axis of size |i| at concat='s position counted without
# split=. numpy, y = arange(32) as [4 8], columns split over i = 4 ([4 2]
# blocks): split=0, concat=1 gives instance i the [2 4] block
# stack([block_k[i] for k], axis=1), joined by rows; z = arange(32) as
# [8 4], rows split ([2 4] blocks): split=1, concat=0 gives the [4 2]
# block stack([block_k[:, i] for k], axis=0), joined by columns.
# expect: ok
# output: [8 4] f32
# output: [[0 2 4 6]
# output:  [1 3 5 7]
# output:  [8 10 12 14]
# output:  [9 11 13 15]
# output:  [16 18 20 22]
# output:  [17 19 21 23]
# output:  [24 26 28 30]
# output:  [25 27 29 31]]
# output: [4 8] f32
# output: [[0 4 1 5 2 6 3 7]
# output:  [8 12 9 13 10 14 11 15]
# output:  [16 20 17 21 18 22 19 23]
# output:  [24 28 25 29 26 30 27 31]]

devices cpu
mesh i=4

spmd fn rows_to_columns(y: [4 n/i]) -> [n/i 4]:
    return all_to_all(y, i, split=0, concat=1, tiled=false)

spmd fn columns_to_rows(z: [n/i 4]) -> [4 n/i]:
    return all_to_all(z, i, split=1, concat=0, tiled=false)

fn main():
    print(rows_to_columns(reshape(to(arange(32), f32), [4, 8])))
    print(columns_to_rows(reshape(to(arange(32), f32), [8, 4])))
