# The fix: mean over the batch axis is lowered to an all-reduce.
# No fn main: several devices are checked, not run, by this suite.
# devices: cpu[0 1 2]
# expect: ok

devices cpu[0 1 2]

dim F = 16

data Sale:
    features: [F] in -10.0..=10.0
    price: f32 in 0.0..=1000.0

model Regressor:
    w: [F] = zeros()
    bias: f32 = zeros()

# The mean squared error.
fn loss(m: Regressor, batch: [b] Sale) -> f32:
    let err = batch.features @ m.w + m.bias - batch.price
    return mean(err * err)

fn train_step(mut m: Regressor, mut opt: SGD[Regressor], batch: [b] Sale) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)
