# E0201: a dtype variable is bound by the parameters' types; one that only
# the result names could be anything, so `U` is an unknown type.
# expect: error E0201 at 7:31

dim D = 4

fn widen(x: [b D] T) -> [b D] U:
    return x
