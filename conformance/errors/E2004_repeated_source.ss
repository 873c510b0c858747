# Instance 0 sent twice: a perm names each instance once as a source.
# expect: error E2004 at 10:41

devices cpu
mesh i=4

dim N = 16

spmd fn rotate(v: [n/i]) -> [n/i]:
    return ppermute(v, i, perm=[(0, 1), (0, 2), (2, 3), (3, 0)])

fn main():
    print(rotate(randn([N], seed=0)))
