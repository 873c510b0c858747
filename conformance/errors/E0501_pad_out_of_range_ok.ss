# The fix: a pad that fits i32.
# expect: ok

dim C = 4

data Sentence:
    tokens: [n] i32 pad=-1
    label: i64 in 0..C

fn count(batch: [b] Sentence) -> [b] i64:
    return sum(to(batch.mask_n, i64), over=n)
