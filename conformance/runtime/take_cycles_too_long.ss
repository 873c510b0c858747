# A take that cycles past the end (library.md: `ds.take(n)` cycles from the
# start) to 2^62 items (issue 32, item 4): its length is 2^62, as the spec
# says, and walking its batches, whose order is held whole, is a
# ValueError at the loop, where it aborted in std::vector (exit 134, no
# location; on several devices a WorkerError with the library's text).
# expect: runtime ValueError
# output: 4611686018427387904
# output: 3

data Digit:
    img: [784] in 0.0..=1.0
    label: i64 in 0..10

fn main():
    let ds = synthetic_digits(Digit, 100, seed=0)
    let t = ds.take(4611686018427387904)
    print(len(t))
    print(len(ds.take(130).batches(64)))
    for b in t.batches(64):
        print(1)
