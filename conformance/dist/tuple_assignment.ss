# Tuple assignment, not only `let`: `h, c = cell(x, h, c)` carries an
# LSTM-like state through a loop, `m.a, m.b = m.b + 1.0, m.a` writes two fields of
# a model in a worker fn, and `_` skips a value. By hand, with
# cell(x, h, c) = (h + x, c * 2):
# h starts [0 0], c [1 1]; x = [1 2] three times: h = [3 6], c = [8 8].
# m.a = [1 2 3], m.b = [4 5 6]; shift sets (a, b) to (b + 1, a), both
# read before either is written: a = [5 6 7], b = [1 2 3], then a =
# [2 3 4], b = [5 6 7]; sum(m.a) = 9.
# expect: ok
# output: [2] f32
# output: [3 6]
# output: [2] f32
# output: [8 8]
# output: [3] f32
# output: [2 3 4]
# output: [3] f32
# output: [5 6 7]
# output: 9.0

dim N = 2
dim K = 3

model Pair:
    a: [K] = zeros()
    b: [K] = zeros()

fn cell(x: [N], h: [N], c: [N]) -> ([N], [N]):
    return h + x, c * 2.0

fn shift(mut m: Pair):
    m.a, m.b = m.b + 1.0, m.a

fn start(mut m: Pair):
    m.a = to(arange(K), f32) + 1.0
    m.b = to(arange(K), f32) + 4.0

fn main():
    let x = to(arange(N), f32) + 1.0
    let h = zeros([N])
    let c = ones([N])
    for i in range(3):
        h, c = cell(x, h, c)
    print(h)
    print(c)
    let m = Pair.init(seed=0)
    start(m)
    shift(m)
    shift(m)
    print(m.a)
    print(m.b)
    let total = 0.0
    total, _ = float(sum(m.a)), 7
    print(total)
