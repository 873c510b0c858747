# The fix for E0101_top_level_statement: the statement is in `fn main()`.
# expect: ok

dim D = 784
dim Hd = 256

model Encoder:
    w: [D Hd] = normal(std=1 / sqrt(D))

fn encode(m: Encoder, x: [b D]) -> [b Hd]:
    return tanh(x @ m.w)

fn main():
    print(encode(Encoder.init(seed=0), zeros([4 D])))
