# The fix for E0303_divided_dim: a window and stride of 2 divide S = 8, so
# the pool's result is [b C S/2 S/2]; a padded 3x3 conv keeps S, and a
# strided 1x1 conv gives S/2 too, so the two paths add (a ResNet's
# downsampling block and its shortcut).
# expect: ok

dim C = 4
dim S = 8

fn down(x: [b C S S], k: [C C 3 3], k1: [C C 1 1]) -> [b C S/2 S/2]:
    let y = max_pool2d(conv2d(x, k, padding=1), 2)
    return y + conv2d(x, k1, stride=2)
