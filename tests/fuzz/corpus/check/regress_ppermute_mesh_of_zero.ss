# Th fix 

devices cpu
mesh i=0

dim N = 16

spmd fn rotate(v: [n/i]) -> [n/i]:
    return ppermute(v, i, perm=[(0, 1), (0, 2), (2, 3), (3, 0)])

fn main():
    print(rotate(randn([N], seed=0)))
