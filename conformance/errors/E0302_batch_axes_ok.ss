# The fix for E0302_batch_axes: k is moved to [b H Dh t], so the batch axes
# are [b H] on both sides and Dh is contracted.
# expect: ok

dim H = 4
dim Dh = 64

# Attention scores: q is heads-first; k comes straight from the projection.
fn scores(q: [b H n Dh], k: [b t H Dh]) -> [b H n t]:
    return q @ rearrange(k, b t H Dh -> b H Dh t) / sqrt(Dh)
