# The Python module's tests on several devices with `shard params`.
devices cpu[0 1 2]
    shard params

dim D = 6
dim C = 4

model Lin:
    w: [D C] f64 = normal(std=1 / sqrt(D))
    b: [C] f64 = zeros()

fn loss(m: Lin, x: [b D] f64, y: [b] i64) -> f64:
    return cross_entropy(x @ m.w + m.b, y)

fn step(mut m: Lin, mut opt: SGD[Lin], x: [b D] f64, y: [b] i64) -> Logs:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return logs(loss=l)
