# adaptive_avg_pool2d to a hostile output size (2^62) is a ValueError at its
# line, before the window matrix is made, where its n * h overflowed into
# an uncaught std::length_error (issue 32's runtime fuzzer). To 2 x 2 from
# 4 x 4 it averages each 2 x 2 block (numpy: arange(16).reshape(4, 4)
# blocks' means 2.5 4.5 / 10.5 12.5).
# expect: runtime ValueError
# output: [2 2] f32
# output: [[2.5 4.5]
# output:  [10.5 12.5]]

dim H = 4

fn main():
    let x = reshape(to(arange(16), f32), [H, H])
    print(adaptive_avg_pool2d(x, 2))
    print(adaptive_avg_pool2d(x, 4611686018427387904))
