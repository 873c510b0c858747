# The fix of E0303_params_arithmetic.ss: two models of one type.
# expect: ok

dim D = 4

model A:
    w: [D] = zeros()

fn mix(a: A, b: A) -> Grads[A]:
    return a * 0.5 + b
