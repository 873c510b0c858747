# Inside an spmd fn, `A/x` in a type is this instance's block of A (spmd.md,
# "Specs in types"; Note [A split axis is sized as its block] in
# ops/core/type.h): on mesh ep=2 with dim E = 4, `E/ep` is 2 long, so a
# dim EL = 2 names it (rearrange's group), and a reshape to `[CapAll/ep D]`
# with CapAll = 8 counts 4·D values, as [Cap D] with Cap = 4 holds.
# Experts' w = arange(E·D) as [E D] = [[0 1 2] [3 4 5] [6 7 8] [9 10 11]];
# instance 0 holds rows 0-1, instance 1 rows 2-3. By hand:
# expert_sums: each instance sums its EL = 2 rows ([3 5 7] and [15 17
# 19]), psum over ep: [18 22 26].
# local_first: each instance's first expert (row 0 of its block): rows 0
# and 2 of w, joined over ep: [0 1 2 6 7 8].
# with_room: x = arange(CapAll·D) as [CapAll D] plus a [Cap D] block of
# ones reshaped to [CapAll/ep D]: x + 1 on every element.
# expect: ok
# output: [3] f32
# output: [18 22 26]
# output: [2 3] f32 (two=2)
# output: [[0 1 2]
# output:  [6 7 8]]
# output: [8 3] f32
# output: [[1 2 3]
# output:  [4 5 6]
# output:  [7 8 9]
# output:  [10 11 12]
# output:  [13 14 15]
# output:  [16 17 18]
# output:  [19 20 21]
# output:  [22 23 24]]

devices cpu
mesh ep=2

dim E = 4
dim EL = 2
dim D = 3
dim Cap = 4
dim CapAll = 8

model Experts:
    w: [E D] = zeros()

spmd fn expert_sums(m: Experts{w/ep}) -> [D]:
    let local = rearrange(m.w, (EL) D -> EL D)
    return psum(sum(local, over=EL), ep)

spmd fn local_first(m: Experts{w/ep}) -> [two/ep D]:
    let local = rearrange(m.w, (EL) D -> EL D)
    return rearrange(local[0], D -> 1 D)

spmd fn with_room(x: [CapAll/ep D]) -> [CapAll/ep D]:
    return x + reshape(ones([Cap D]), [CapAll/ep D])

fn start(mut m: Experts):
    m.w = reshape(to(arange(E * D), f32), [E D])

fn main():
    let m = Experts.init(seed=0)
    start(m)
    print(expert_sums(m))
    print(local_first(m))
    print(with_room(reshape(to(arange(CapAll * D), f32), [CapAll D])))
