# The program of E1802_size_of_batch.ss on one device: nothing is split,
# so nothing is reported.
# devices: cpu
# expect: ok

devices cpu

dim F = 16

data Sale:
    features: [F] in -10.0..=10.0
    price: f32 in 0.0..=1000.0

model Regressor:
    w: [F] = zeros()
    bias: f32 = zeros()

# The mean squared error, written out.
fn loss(m: Regressor, batch: [b] Sale) -> f32:
    let err = batch.features @ m.w + m.bias - batch.price
    return sum(err * err) / size(err, b)

fn train_step(mut m: Regressor, mut opt: SGD[Regressor], batch: [b] Sale) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)
