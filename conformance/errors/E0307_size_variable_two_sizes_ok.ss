# The fix for E0307_size_variable_two_sizes: the position table has one row
# per position, T.
# expect: ok

dim T = 128
dim S = 64
dim D = 256

model Encoder:
    pos: [T D] = normal(std=0.02)
    w: [D D] = normal(std=0.02)

fn add_positions(x: [b n D], pos: [n D]) -> [b n D]:
    return x + pos

# x is a batch of full-length sequences, T positions each.
fn encode(m: Encoder, x: [b T D]) -> [b T D]:
    let h = add_positions(x, m.pos)
    return gelu(h @ m.w)
