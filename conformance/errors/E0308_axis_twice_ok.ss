# The fix for E0308_axis_twice: the axis is picked by position; a row is
# the last axis, over=-1.
# expect: ok

dim F = 64

model Mixer:
    w: [F F] = normal(std=0.02)

# Mix the features with a row-stochastic matrix: each row of w sums to 1.
fn mix(m: Mixer, x: [b F]) -> [b F]:
    return x @ softmax(m.w, over=-1)
