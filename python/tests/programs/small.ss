# The Python module's tests (python/tests/): a linear classifier in f64,
# so that torch, the oracle, agrees to rounding.
dim D = 4
dim C = 3

model Lin:
    w: [D C] f64 = normal(std=1 / sqrt(D))
    b: [C] f64 = zeros()

fn forward(m: Lin, x: [b D] f64) -> [b C] f64:
    return x @ m.w + m.b

fn ident(x: [b D] f64) -> [b D] f64:
    return x

fn scale(x: [b D] f64, k: float) -> [b D] f64:
    return x * k

fn loss(m: Lin, x: [b D] f64, y: [b] i64) -> f64:
    return cross_entropy(forward(m, x), y)

fn step(mut m: Lin, mut opt: SGD[Lin], x: [b D] f64, y: [b] i64) -> Logs:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return logs(loss=l, steps=1)

fn pair(x: [b D] f64) -> ([b D] f64, int):
    return x, 7

fn shout(n: int) -> int:
    print("hello from ShapeScript", n)
    return n + 1

fn spin(n: int) -> int:
    let i = 0
    while i < n:
        i += 1
    return i

fn spin_on_workers(x: [b D] f64, n: int) -> f64:
    let i = 0
    while i < n:
        i += 1
    return sum(x)

fn count_up(n: int) -> int:
    let total = 0
    for i in progress(range(n)):
        total += i
    return total
