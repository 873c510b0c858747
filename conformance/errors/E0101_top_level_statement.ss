# E0101: a file has declarations only; a statement at the top level (as in
# the repl) does not parse. The call belongs in `fn main()`.
# expect: error E0101 at 14:1

dim D = 784
dim Hd = 256

model Encoder:
    w: [D Hd] = normal(std=1/sqrt(D))

fn encode(m: Encoder, x: [b D]) -> [b Hd]:
    return tanh(x @ m.w)

print(encode(Encoder.init(seed=0), zeros([4 D])))
