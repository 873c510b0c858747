# The fix of E0303_optimizer_flag.ss: amsgrad=true.
# expect: ok

dim D = 4

model M:
    w: [D] = zeros()

fn make(m: M) -> Adam[M]:
    return adam(m, lr=1e-3, amsgrad=true)
