# The declarations of language.md, "Declarations", as one program.
# expect: ok

devices cpu

dim D = 784
dim Hd = 256
dim C = 10
dim L = 2
dim V = 100

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

data Sentence:
    tokens: [n] i64 in 0..V
    label: i64 in 0..C

model Block:
    w: [Hd Hd] = normal(std=1 / sqrt(Hd))

model Dense[I O]:
    w: [I O] = normal(std=1 / sqrt(I))
    b: [O] = zeros()

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))
    norm: LayerNorm[C]
    blocks: [L] Block
    head: Dense[C C]
    buffer mean: [C] = zeros()

extern fn my_norm(x: [*s d], over: Axis[d],
                  eps: float = 1e-5) -> [*s d] = "nn.layer_norm"

fn dense(l: Dense[I O], x: [b I]) -> [b O] = x @ l.w + l.b

fn forward(m: Mlp, x: [b D], c: int = 3) -> [b C]:
    let h = relu(x @ m.w1)
    for blk in m.blocks:
        h = h + relu(h @ blk.w)
    let y = layer_norm(h @ m.w2, over=C, affine=m.norm)
    return my_norm(dense(m.head, y), over=C) - m.mean

fn classify(m: Mlp, batch: [b] Digit) -> f32 = cross_entropy(forward(m, batch.img),
                                                             batch.label)

fn main():
    let m = Mlp.init(seed=0)
    print(m.blocks[0].w)
