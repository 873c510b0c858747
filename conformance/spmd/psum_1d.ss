# The tutorial's f1 (shard-map.md, psum): x = [3 1 4 1 5 9 2 6 5 3 5 8 9 7
# 1 2] on mesh i=4; each instance prints its block, then the psum, the sum
# of the four blocks (3+5+5+9, 1+9+3+7, 4+2+5+1, 1+6+8+2), and the caller
# takes one copy (out_specs=P()).
# expect: ok
# output: [i=0] [4] f32 (n/i=4)
# output: [i=0] [3 1 4 1]
# output: [i=1] [4] f32 (n/i=4)
# output: [i=1] [5 9 2 6]
# output: [i=2] [4] f32 (n/i=4)
# output: [i=2] [5 3 5 8]
# output: [i=3] [4] f32 (n/i=4)
# output: [i=3] [9 7 1 2]
# output: [i=0] [4] f32 (n/i=4)
# output: [i=0] [22 20 12 17]
# output: [i=1] [4] f32 (n/i=4)
# output: [i=1] [22 20 12 17]
# output: [i=2] [4] f32 (n/i=4)
# output: [i=2] [22 20 12 17]
# output: [i=3] [4] f32 (n/i=4)
# output: [i=3] [22 20 12 17]
# output: [4] f32 (r=4)
# output: [22 20 12 17]

devices cpu
mesh i=4

spmd fn f1(x: [n/i]) -> [r]:
    print(x)
    let y = psum(x, i)
    print(y)
    return y

fn main():
    let x = tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0,
                    7.0, 1.0, 2.0])
    print(f1(x))
