# E0402: a model field keeps its type, dtype included: w1 is [D Hd] f32, and
# the converted copy is bf16.
# expect: error E0402 at 17:12

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C] = relu(x @ m.w1) @ m.w2

# Round the weights to bf16 precision, to see what it costs in accuracy.
fn round_to_bf16(mut m: Mlp):
    m.w1 = to(m.w1, bf16)
    m.w2 = to(to(m.w2, bf16), f32)
