# A float literal past f64's range reads as Python reads it (issue 32 item
# 14): print(1e99999, -1e99999, 1e-99999) in Python 3 prints inf -inf 0.0,
# and 1e308 * 10.0 overflows to inf.
# expect: ok
# output: inf
# output: -inf
# output: 0.0
# output: inf

fn main():
    print(1e99999)
    print(-1e99999)
    print(1e-99999)
    print(1e308 * 10.0)
