# The fix for E0304_dtype_variable_bound_twice: convert the scale to x's
# dtype, so that `T` is f64 at both places.
# expect: ok

dim D = 4

fn scale(x: [b D] T, k: T) -> [b D] T:
    return x * k

fn main():
    let x = ones([2 D] f64)
    let y = ones([2 D])
    print(scale(x, to(mean(y), f64)))
