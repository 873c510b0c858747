# An integer tensor modulo 0 (issue 32, item 3): a ValueError at the `.ss`
# line, on one device and from the workers alike, not an abort.
# expect: runtime ValueError

fn rests(x: [b] i64, d: i64) -> [b] i64:
    return x % d

fn main():
    print(rests(arange(8), tensor(3)))
    print(rests(arange(8), tensor(0)))
