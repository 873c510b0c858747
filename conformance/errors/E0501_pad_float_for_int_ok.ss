# The fix: an integer pad (-1 is outside the domain: pads are masked).
# expect: ok

dim V = 64
dim C = 4

data Sentence:
    tokens: [n] i64 in 0..V pad=-1
    label: i64 in 0..C

fn count(batch: [b] Sentence) -> [b] i64:
    return sum(to(batch.mask_n, i64), over=n)
