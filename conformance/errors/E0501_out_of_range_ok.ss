# The fix for E0501_out_of_range: the price is stored as f32.
# expect: ok

dim F = 16

data Sale:
    features: [F] in -10.0..=10.0
    # the price, in f32: f16 cannot hold it
    price: f32 in 0.0..=1000000.0

model Regressor:
    w: [F] = zeros()

fn loss(m: Regressor, batch: [b] Sale) -> f32:
    return mse(batch.features @ m.w, batch.price)
