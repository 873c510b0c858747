# The fix of E2004_repeated_destination.ss: a cyclic shift, each instance
# once a source and once a destination.
# expect: ok

devices cpu
mesh i=4

dim N = 16

spmd fn rotate(v: [n/i]) -> [n/i]:
    return ppermute(v, i, perm=[(0, 1), (1, 2), (2, 3), (3, 0)])

fn main():
    print(rotate(randn([N], seed=0)))
