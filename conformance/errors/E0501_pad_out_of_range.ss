# E0501: a pad value must fit its field's dtype: 2147483648 (2^31) is past
# i32's largest value.
# expect: error E0501 at 8:25

dim C = 4

data Sentence:
    tokens: [n] i32 pad=2147483648
    label: i64 in 0..C

fn count(batch: [b] Sentence) -> [b] i64:
    return sum(to(batch.mask_n, i64), over=n)
