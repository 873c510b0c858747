# An spmd fn called from another spmd fn is inlined (spmd.md): `centre`
# runs inside each instance of `spread` on the block it is given. With the
# tutorial's blocks [3 1 4 1], [5 9 2 6], [5 3 5 8], [9 7 1 2] on mesh
# i=4, the mean over the instances is [5.5 5 3 4.25] and the psum of the
# squared deviations is, elementwise, 6.25+0.25+0.25+12.25 = 19,
# 16+16+4+4 = 40, 1+1+4+4 = 10 and 10.5625+3.0625+14.0625+5.0625 = 32.75.
# expect: ok
# output: [4] f32 (r=4)
# output: [19 40 10 32.75]

devices cpu
mesh i=4

spmd fn centre(a: [n/i]) -> [n/i]:
    return a - pmean(a, i)

spmd fn spread(x: [n/i]) -> [r]:
    let d = centre(x)
    return psum(d * d, i)

fn main():
    let x = tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0,
                    7.0, 1.0, 2.0])
    print(spread(x))
