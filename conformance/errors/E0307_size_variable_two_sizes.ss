# E0307: within one call a size variable has one size. `add_positions`'s n
# is bound to T (128) by x, then meets S (64) in the position table, which
# was declared for the shorter context length.
# expect: error E0307 at 19:30

dim T = 128
dim S = 64
dim D = 256

model Encoder:
    pos: [S D] = normal(std=0.02)
    w: [D D] = normal(std=0.02)

fn add_positions(x: [b n D], pos: [n D]) -> [b n D]:
    return x + pos

# x is a batch of full-length sequences, T positions each.
fn encode(m: Encoder, x: [b T D]) -> [b T D]:
    let h = add_positions(x, m.pos)
    return gelu(h @ m.w)
