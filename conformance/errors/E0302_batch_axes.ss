# E0302: with both operands 3-d or more, `@`'s leading axes are batch axes
# and must be equal. k is moved to [b t Dh H]: Dh is contracted, but its
# batch axes [b t] do not align with q's [b H] (the heads were left behind).
# The error is at the matmul, from its left operand.
# expect: error E0302 at 12:12

dim H = 4
dim Dh = 64

# Attention scores: q is heads-first; k comes straight from the projection.
fn scores(q: [b H n Dh], k: [b t H Dh]) -> [b H n t]:
    return q @ rearrange(k, b t H Dh -> b t Dh H) / sqrt(Dh)
