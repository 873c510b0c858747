# A value_and_grad inside an spmd fn is a meeting of every instance (the
# gradient of the replicated w is summed over its copies: Note [A
# gradient inside an instance] in ops/registry/mesh_comm.h), so under a
# condition that varies over the mesh it is E2006, as a collective is:
# without the check, on cpu[2] the instance that took the branch summed its
# gradient with the other's psum and printed [27 -2] before the run failed.
# expect: error E2006 at 16:8

devices cpu
mesh x=2

fn sq(w: [k]) -> f32:
    return sum(w * w)

spmd fn outer(w: [k], v: [n/x k]) -> f32:
    if axis_index(x) == 0:
        let l, g = value_and_grad(sq, w)
        print(g)
    return psum(sum(v), x)

fn main():
    let v = to(reshape(arange(8), [4, 2]), f32) + 1.0
    print(outer(tensor([0.5, -1.0]), v))
