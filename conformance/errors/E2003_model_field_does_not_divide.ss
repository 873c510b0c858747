# `m: Lin/x` cuts every field's first axis into |x| = 4 blocks, and w's
# D = 6 rows do not divide (spmd.md: E2003 when a split does not divide).
# The checker once let it run, and each instance got a block of one row:
# the joined result had 4 rows, not 6.
# expect: error E2003 at 19:34

devices cpu
mesh x=4

dim D = 6
dim F = 4

model Lin:
    w: [D F] = zeros()

spmd fn blocks(m: Lin/x) -> [D/x F]:
    return m.w

fn use(m: Lin) -> [D F] = blocks(m)
