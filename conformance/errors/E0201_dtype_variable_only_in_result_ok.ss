# The fix for E0201_dtype_variable_only_in_result: the result names the
# parameter's variable (or a dtype: `-> [b D] f64` with `to(x, f64)`).
# expect: ok

dim D = 4

fn widen(x: [b D] T) -> [b D] T:
    return x
