# The size of the batch axis used as a number (docs/errors/E1802.md).
# devices: cpu[0 1 2]
# expect: error E1802 at 20:29

devices cpu[0 1 2]

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

fn main():
    let sales = dataset(Sale, "sales.csv")
    let m = Regressor.init(seed=0)
    let opt = sgd(m, lr=1e-2)
    let out = stdout()
    for batch in sales.batches(64, shuffle=0):
        out.write(train_step(m, opt, batch))
