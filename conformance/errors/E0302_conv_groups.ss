# E0302: with groups=2 a kernel sees half of x's channels: k is [O C/2 kh
# kw], so [6 4 3 3] does not fit x's 4 channels in 2 groups.
# expect: error E0302 at 8:12

dim C = 4

fn f(x: [b C 8 8], k: [6 4 3 3]) -> [b 6 8 8]:
    return conv2d(x, k, padding=1, groups=2)
