# The fix for E0306_group_not_dividing: K = 4 divides T = 100 (m = 25).
# expect: ok

dim T = 100
dim D = 64
dim K = 4

# Cut each sequence into K equal chunks.
fn chunks(x: [b T D]) -> [b K m D]:
    return rearrange(x, b (K m) D -> b K m D)
