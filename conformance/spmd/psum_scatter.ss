# The tutorial's f6 (shard-map.md, psum_scatter): the psum of the four
# blocks of x is [22 20 12 17]; instance i keeps element i, and
# out_specs=P('i') joins them: [22 20 12 17], the same as psum's result.
# Untiled, the leading axis (of size |i|) goes: on y = arange(16) as [4 4]
# split by columns, the sum of the four column blocks is the row sums
# [6 22 38 54], and instance i keeps entry i: joined, [6 22 38 54].
# expect: ok
# output: [4] f32 (r=4)
# output: [22 20 12 17]
# output: [4] f32 (r=4)
# output: [6 22 38 54]

devices cpu
mesh i=4

spmd fn f6(x: [n/i]) -> [r/i]:
    return psum_scatter(x, i, over=n)

spmd fn untiled(y: [4 n/i]) -> [r/i]:
    return psum_scatter(y, i, tiled=false)

fn main():
    let x = tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0,
                    7.0, 1.0, 2.0])
    print(f6(x))
    print(untiled(to(reshape(arange(16), [4, 4]), f32)))
