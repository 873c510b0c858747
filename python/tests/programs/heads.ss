# The Python module's tests with `split H` on cpu[0 1 2]: each worker
# holds H / 3 heads of every param typed with H.
devices cpu[0 1 2]
    split H

dim D = 6
dim H = 3
dim Dh = 2

model Heads:
    w_in: [D (H Dh)] f64 = normal(std=0.3)
    w_out: [(H Dh) D] f64 = normal(std=0.3)

fn loss(m: Heads, x: [b D] f64) -> f64:
    let h = relu(x @ m.w_in)
    return mean((h @ m.w_out - x) ** 2.0)

fn step(mut m: Heads, mut opt: SGD[Heads], x: [b D] f64) -> Logs:
    let l, g = value_and_grad(loss, m, x)
    update(m, opt, g)
    return logs(loss=l)
