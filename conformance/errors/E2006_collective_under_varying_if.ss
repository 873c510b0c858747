# Some instances take the branch and the others do not: the pmax would
# wait forever for the ones that skipped it (docs/errors/E2006.md).
# expect: error E2006 at 13:8

devices cpu
mesh x=4

dim M = 16
dim K = 8

spmd fn normalise(a: [m/x k]) -> [m/x k]:
    let v = a
    if max(a) > 0.0:
        v = a / pmax(max(a), x)
    return v

fn main():
    print(normalise(randn([M K], seed=0)))
