# pmean, pmax and pmin of the tutorial's blocks [3 1 4 1], [5 9 2 6],
# [5 3 5 8], [9 7 1 2] on mesh i=4: the mean [5.5 5 3 4.25] (the psum
# [22 20 12 17] over 4), the maximum [9 9 5 8] and the minimum [3 1 1 1],
# elementwise. axis_index(i) is each instance's index (printed with its
# mesh index, in instance order) and axis_size(i) is 4.
# expect: ok
# output: [i=0] i32 0 4
# output: [i=1] i32 1 4
# output: [i=2] i32 2 4
# output: [i=3] i32 3 4
# output: [4] f32 (r=4)
# output: [5.5 5 3 4.25]
# output: [4] f32 (r=4)
# output: [9 9 5 8]
# output: [4] f32 (r=4)
# output: [3 1 1 1]

devices cpu
mesh i=4

spmd fn stats(x: [n/i]) -> ([r], [r], [r]):
    print(axis_index(i), axis_size(i))
    return pmean(x, i), pmax(x, i), pmin(x, i)

fn main():
    let x = tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0,
                    7.0, 1.0, 2.0])
    let m, hi, lo = stats(x)
    print(m)
    print(hi)
    print(lo)
