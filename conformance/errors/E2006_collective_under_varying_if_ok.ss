# The fix of E2006_collective_under_varying_if.ss: every instance runs the
# pmax, and where(...) chooses per instance.
# expect: ok

devices cpu
mesh x=4

dim M = 16
dim K = 8

spmd fn normalise(a: [m/x k]) -> [m/x k]:
    let scaled = a / pmax(max(a), x)
    return where(max(a) > 0.0, scaled, a)

fn main():
    print(normalise(randn([M K], seed=0)))
