# The fix for E0304_dtype_variable_instance: the constant made in x's own
# dtype, `ones([D] T)`, keeps every instance's result `[b D] T`.
# expect: ok

dim D = 4

fn shift(x: [b D] T) -> [b D] T:
    return x + ones([D] T)

fn main():
    print(shift(ones([2 D] f64)))
    print(shift(ones([2 D] bf16)))
