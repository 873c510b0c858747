# The fix of E0303_optimizer_hyperparameter.ss: a momentum >= 0.
# expect: ok

dim D = 4

model M:
    w: [D] = zeros()

fn make(m: M) -> RMSprop[M]:
    return rmsprop(m, momentum=0.5, centered=true)
