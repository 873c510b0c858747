# The tutorial's f2 and f3 (shard-map.md, psum on mesh2d): x = arange(16)
# as [4 4] on mesh i=2 j=2, instance (i, j) holding rows 2i..2i+1 and
# columns 2j..2j+1. psum over i adds the two row blocks of each column
# block: [[0 1] [4 5]] + [[8 9] [12 13]] = [[8 10] [16 18]], and
# [[12 14] [20 22]] for j=1, joined along j (out_specs=P(None, 'j')). psum
# over (i, j) adds all four blocks: [[20 24] [36 40]] (out_specs=P()).
# expect: ok
# output: [2 4] f32 (r=2 c=4)
# output: [[8 10 12 14]
# output:  [16 18 20 22]]
# output: [i=0 j=0] [2 2] f32 (m/i=2 n/j=2)
# output: [i=0 j=0] [[20 24]
# output: [i=0 j=0]  [36 40]]
# output: [i=0 j=1] [2 2] f32 (m/i=2 n/j=2)
# output: [i=0 j=1] [[20 24]
# output: [i=0 j=1]  [36 40]]
# output: [i=1 j=0] [2 2] f32 (m/i=2 n/j=2)
# output: [i=1 j=0] [[20 24]
# output: [i=1 j=0]  [36 40]]
# output: [i=1 j=1] [2 2] f32 (m/i=2 n/j=2)
# output: [i=1 j=1] [[20 24]
# output: [i=1 j=1]  [36 40]]
# output: [2 2] f32 (r=2 c=2)
# output: [[20 24]
# output:  [36 40]]

devices cpu
mesh i=2 j=2

spmd fn f2(x: [m/i n/j]) -> [r c/j]:
    return psum(x, i)

spmd fn f3(x: [m/i n/j]) -> [r c]:
    let y = psum(x, (i, j))
    print(y)
    return y

fn main():
    let x = to(reshape(arange(16), [4, 4]), f32)
    print(f2(x))
    print(f3(x))
