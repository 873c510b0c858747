# A mesh program partitions data only through its spmd fns: `shard params`,
# an option of the automatic several-devices mode, is E2005 with a mesh.
# devices: cpu[0 1 2 3]
# expect: error E2005 at 7:5

devices cpu[0 1 2 3]
    shard params

mesh x=4

dim M = 8
dim K = 16

spmd fn rowsum(a: [m/x k]) -> [m/x]:
    return sum(a, over=k)

fn main():
    print(rowsum(randn([M K], seed=0)))
