# E0304: a dtype variable is one dtype at every place of a call (Note
# [Dtype variables] in interp/check/generics.cpp): `T` is f64 at `x`, but
# the scale is a mean of f32 values.
# expect: error E0304 at 14:20

dim D = 4

fn scale(x: [b D] T, k: T) -> [b D] T:
    return x * k

fn main():
    let x = ones([2 D] f64)
    let y = ones([2 D])
    print(scale(x, mean(y)))
