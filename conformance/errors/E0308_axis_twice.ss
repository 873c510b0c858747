# E0308: `over=` names an axis that appears twice in the operand: m.w is
# [F F], so over=F does not say which of its two axes is meant.
# expect: error E0308 at 12:34

dim F = 64

model Mixer:
    w: [F F] = normal(std=0.02)

# Mix the features with a row-stochastic matrix: each row of w sums to 1.
fn mix(m: Mixer, x: [b F]) -> [b F]:
    return x @ softmax(m.w, over=F)
