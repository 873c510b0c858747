# The fix of E0303_keepdim_not_literal.ss: keepdim=true, written out.
# expect: ok

dim D = 4

fn stats(x: [b D], keep: bool) -> [b 1]:
    return mean(x, over=D, keepdim=true)
