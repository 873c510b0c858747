# The fix for E0103_unclosed_bracket: the `(` is closed on its line.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    let h = relu(x @ m.w1)
    return h @ m.w2

fn main():
    let m = Mlp.init(seed=0)
    print(forward(m, zeros([4 D])))
