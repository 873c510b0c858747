# The fix of E0302_conv_groups.ss: each group's kernel takes 2 channels.
# expect: ok

dim C = 4

fn f(x: [b C 8 8], k: [6 2 3 3]) -> [b 6 8 8]:
    return conv2d(x, k, padding=1, groups=2)
