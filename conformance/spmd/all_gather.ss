# The tutorial's f4 and f5 (shard-map.md, all_gather): x = [3 9 5 2] on
# mesh i=4, one element each. Tiled, every instance holds [3 9 5 2], and
# out_specs=P('i') joins the four copies. Untiled, the blocks are stacked
# along a new leading axis: [[3] [9] [5] [2]] on every instance.
# expect: ok
# output: [16] f32 (r=16)
# output: [3 9 5 2 3 9 5 2 3 9 5 2 3 9 5 2]
# output: [i=0] [4 1] f32 (n/i=1)
# output: [i=0] [[3]
# output: [i=0]  [9]
# output: [i=0]  [5]
# output: [i=0]  [2]]
# output: [i=1] [4 1] f32 (n/i=1)
# output: [i=1] [[3]
# output: [i=1]  [9]
# output: [i=1]  [5]
# output: [i=1]  [2]]
# output: [i=2] [4 1] f32 (n/i=1)
# output: [i=2] [[3]
# output: [i=2]  [9]
# output: [i=2]  [5]
# output: [i=2]  [2]]
# output: [i=3] [4 1] f32 (n/i=1)
# output: [i=3] [[3]
# output: [i=3]  [9]
# output: [i=3]  [5]
# output: [i=3]  [2]]
# output: [4] f32
# output: [3 9 5 2]

devices cpu
mesh i=4

spmd fn f4(x: [n/i]) -> [r/i]:
    return all_gather(x, i, over=n)

spmd fn f5(x: [n/i]) -> [n/i]:
    let y = all_gather(x, i, tiled=false)
    print(y)
    return x

fn main():
    let x = tensor([3.0, 9.0, 5.0, 2.0])
    print(f4(x))
    print(f5(x))
