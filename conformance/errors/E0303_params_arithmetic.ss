# E0303: arithmetic over params is field by field, so both sides have one
# model type: A's params cannot be added to B's.
# expect: error E0303 at 14:12

dim D = 4

model A:
    w: [D] = zeros()

model B:
    w: [D] = zeros()

fn mix(a: A, b: B) -> Grads[A]:
    return a * 0.5 + b
