# E0501: a pad value must fit its field's dtype. `tokens` holds i64 token
# ids, but its pad is the float 0.5.
# expect: error E0501 at 9:33

dim V = 64
dim C = 4

data Sentence:
    tokens: [n] i64 in 0..V pad=0.5
    label: i64 in 0..C

fn count(batch: [b] Sentence) -> [b] i64:
    return sum(to(batch.mask_n, i64), over=n)
