# An integer tensor floor-divided by 0 (issue 32, item 3): a ValueError at
# the `.ss` line, on one device and from the workers alike, where the
# kernel's std::invalid_argument used to abort the process (exit 134, no
# location) and come back from a worker as its raw text. torch raises
# ZeroDivisionError.
# expect: runtime ValueError

fn halves(x: [b] i64, d: i64) -> [b] i64:
    return x // d

fn main():
    print(halves(arange(8), tensor(2)))
    print(halves(arange(8), tensor(0)))
