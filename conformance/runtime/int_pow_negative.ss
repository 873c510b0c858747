# An integer tensor to a negative integer power is the user's value, a
# ValueError at its line (torch: "Integers to negative integer powers are
# not allowed"); it escaped as an internal error and ended `ss run` (issue
# 32's runtime fuzzer). A power >= 0 is exact: 2 ** 3 = 8, 3 ** 0 = 1.
# expect: runtime ValueError
# output: [2] i64
# output: [8 1]

fn main():
    let b = tensor([2, 3])
    print(pow(b, tensor([3, 0])))
    print(pow(b, tensor([1, -1])))
