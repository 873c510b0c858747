# shapescript.run's tests (test_run.py): a fn over a batch, computed on each
# device's share on several, host values printed, the entry's arguments,
# and an error at its `.ss` line.
dim D = 4

fn total(x: [b D] f64) -> f64:
    return sum(x * x)

fn halves(x: [b] i64, d: i64) -> [b] i64:
    return x // d

fn main(args: list[str]):
    let x = to(reshape(arange(24), [6, D]), f64)
    print("total", total(x))
    for a in args:
        print("arg", a)

fn divide_by_zero():
    print("before")
    print(halves(arange(8), tensor(0)))
