# value_and_grad inside an spmd fn (the tutorial: "when we have a grad
# inside the shard_mapped function body"), as JAX computes it (Note [A
# gradient inside an instance] in ops/registry/mesh_comm.h): the model is
# replicated over batch, so its gradient is summed over the instances and
# the same on every one. Differentiating the data-parallel loss (pmean of
# each instance's mean over its rows) gives the whole batch's gradient on
# every instance; differentiating the plain loss on each instance's rows
# gives the sum of the four instances' gradients, 4 times it (each
# instance's mean is over 2 of the 8 rows). numpy, for x = arange(24)/10
# as [8 3], w = (arange(6) - 2)/5 as [3 2] and y = 0.5: loss 0.4194,
# gradient [[-0.882 1.134] [-0.966 1.188] [-1.05 1.242]], 4 times it
# [[-3.528 4.536] [-3.864 4.752] [-4.2 4.968]]. The model's field is set
# in a worker fn (`start`), since main prints: on cpu[4] a write there is
# E1803.
# expect: ok
# output: [batch=0] [3 2] f32
# output: [batch=0] [[-0.882 1.134]
# output: [batch=0]  [-0.966 1.188]
# output: [batch=0]  [-1.05 1.242]]
# output: [batch=1] [3 2] f32
# output: [batch=1] [[-0.882 1.134]
# output: [batch=1]  [-0.966 1.188]
# output: [batch=1]  [-1.05 1.242]]
# output: [batch=2] [3 2] f32
# output: [batch=2] [[-0.882 1.134]
# output: [batch=2]  [-0.966 1.188]
# output: [batch=2]  [-1.05 1.242]]
# output: [batch=3] [3 2] f32
# output: [batch=3] [[-0.882 1.134]
# output: [batch=3]  [-0.966 1.188]
# output: [batch=3]  [-1.05 1.242]]
# output: (f32 0.4194, [3 2] f32
# output: [[-3.528 4.536]
# output:  [-3.864 4.752]
# output:  [-4.2 4.968]])

devices cpu
mesh batch=4

dim D = 3
dim C = 2

model Lin:
    w: [D C] = zeros()

fn loss(m: Lin, x: [n D], y: [n C]) -> []:
    let e = x @ m.w - y
    return mean(sum(e * e, over=C))

spmd fn loss_dp(m: Lin, x: [n/batch D], y: [n/batch C]) -> []:
    return pmean(loss(m, x, y), batch)

spmd fn grad_dp(m: Lin, x: [n/batch D], y: [n/batch C]) -> ([], [D C]):
    let l, g = value_and_grad(loss_dp, m, x, y)
    print(g.w)
    let g_rows = grad(loss, m, x, y)
    return l, g_rows.w

fn start(mut m: Lin):
    m.w = (to(reshape(arange(6), [D, C]), f32) - 2.0) / 5.0

fn main():
    let m = Lin.init(seed=0)
    start(m)
    let x = to(reshape(arange(24), [8, D]), f32) / 10.0
    let y = ones([8, C]) * 0.5
    print(grad_dp(m, x, y))
