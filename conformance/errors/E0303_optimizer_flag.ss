# E0303: Adam's amsgrad= is true or false, not a number.
# expect: error E0303 at 10:37

dim D = 4

model M:
    w: [D] = zeros()

fn make(m: M) -> Adam[M]:
    return adam(m, lr=1e-3, amsgrad=1)
