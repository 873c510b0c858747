# E0303: a dim and a literal of the same size are not equal: [64 784] does
# not fit [b D] although D = 784. Writing the dim is what lets the checker
# catch swapped or mistyped axes.
# expect: error E0303 at 20:22

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
    let x = rand([64 784], seed=0)
    print(forward(m, x))
