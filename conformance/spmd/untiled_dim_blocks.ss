# tiled=false on a block of a dim (x: [N/i], N = 16 over |i| = 4): the
# block's leading axis has size 4 = |i|, as psum_scatter and all_to_all
# untiled need; the checker compared N's whole size (16) and said E2003.
# The tutorial's blocks [3 1 4 1], [5 9 2 6], [5 3 5 8], [9 7 1 2]:
# psum_scatter leaves instance i element i of the sum [22 20 12 17] (0-d);
# all_to_all (all_to_all_ref, untiled: stack of entry i of every block)
# gives instance i [b0[i] b1[i] b2[i] b3[i]], joined:
# [3 5 5 9 1 9 3 7 4 2 5 1 1 6 8 2].
# expect: ok
# output: [i=0] f32 22
# output: [i=1] f32 20
# output: [i=2] f32 12
# output: [i=3] f32 17
# output: [16] f32
# output: [3 5 5 9 1 9 3 7 4 2 5 1 1 6 8 2]

devices cpu
mesh i=4

dim N = 16

spmd fn untiled(x: [N/i]) -> [N/i]:
    let y = psum_scatter(x, i, tiled=false)
    print(y)
    return all_to_all(x, i, split=N, concat=N, tiled=false)

fn main():
    let x = reshape(tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0,
                            9.0, 7.0, 1.0, 2.0]), [N])
    print(untiled(x))
