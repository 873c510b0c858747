# The tutorial's f7 (shard-map.md, ppermute): arange(8) on mesh i=4, two
# elements each. shift=1 sends instance i's block to i+1 (the cyclic perm
# [(0, 1), (1, 2), (2, 3), (3, 0)]): [6 7 0 1 2 3 4 5]; shift=-1 to i-1:
# [2 3 4 5 6 7 0 1]. perm=[(0, 2)] sends block 0 to instance 2 alone; the
# others receive nothing and hold zeros: [0 0 0 0 0 1 0 0].
# expect: ok
# output: [8] f32
# output: [6 7 0 1 2 3 4 5]
# output: [8] f32
# output: [2 3 4 5 6 7 0 1]
# output: [8] f32
# output: [0 0 0 0 0 1 0 0]
# output: [8] f32
# output: [6 7 0 1 2 3 4 5]

devices cpu
mesh i=4

spmd fn up(x: [n/i]) -> [n/i]:
    return ppermute(x, i, shift=1)

spmd fn down(x: [n/i]) -> [n/i]:
    return ppermute(x, i, shift=-1)

spmd fn one_pair(x: [n/i]) -> [n/i]:
    return ppermute(x, i, perm=[(0, 2)])

spmd fn ring(x: [n/i]) -> [n/i]:
    return ppermute(x, i, perm=[(0, 1), (1, 2), (2, 3), (3, 0)])

fn main():
    let x = to(arange(8), f32)
    print(up(x))
    print(down(x))
    print(one_pair(x))
    print(ring(x))
