# A ring whose last pair sends to 3 again (docs/errors/E2004.md).
# expect: error E2004 at 10:57

devices cpu
mesh i=4

dim N = 16

spmd fn rotate(v: [n/i]) -> [n/i]:
    return ppermute(v, i, perm=[(0, 1), (1, 2), (2, 3), (3, 3)])

fn main():
    print(rotate(randn([N], seed=0)))
