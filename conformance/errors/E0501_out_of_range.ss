# E0501: a data field's domain must fit its dtype: f16's largest finite value
# is 65504, and prices go up to 1,000,000.
# expect: error E0501 at 10:16

dim F = 16

data Sale:
    features: [F] in -10.0..=10.0
    # the price, stored in half precision to save memory
    price: f16 in 0.0..=1000000.0

model Regressor:
    w: [F] = zeros()

fn loss(m: Regressor, batch: [b] Sale) -> f32:
    return mse(batch.features @ m.w, batch.price)
