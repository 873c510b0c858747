# The fix for E0303_literal_vs_dim: the input is made with the dim, [64 D].
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn main():
    let m = Mlp.init(seed=0)
    let x = rand([64 D], seed=0)
    print(forward(m, x))
