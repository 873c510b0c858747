# E0303: keepdim= changes the result's type ([b 1] or [b]), so it is
# written as true or false, not computed.
# expect: error E0303 at 8:36

dim D = 4

fn stats(x: [b D], keep: bool) -> [b 1]:
    return mean(x, over=D, keepdim=keep)
