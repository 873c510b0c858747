# Gradients through psum and all_gather (spmd.md, Autodiff), against hand
# values. w = arange(8) on mesh i=4. total = psum over i of each block's
# sum of squares = sum(w²) = 140, gradient 2w. gathered all-gathers w on
# every instance and psums the four instances' sum(w²): 4 · 140 = 560,
# gradient 8w (psum's transpose sends the cotangent to all four copies,
# all_gather's, psum_scatter, sums them back to w's blocks). pmean instead
# of psum divides both by 4: 140, 2w.
# expect: ok
# output: (f32 140, [8] f32
# output: [0 2 4 6 8 10 12 14])
# output: (f32 560, [8] f32
# output: [0 8 16 24 32 40 48 56])
# output: (f32 140, [8] f32
# output: [0 2 4 6 8 10 12 14])

devices cpu
mesh i=4

spmd fn total(w: [n/i]) -> []:
    return psum(sum(w * w), i)

spmd fn gathered(w: [n/i]) -> []:
    let full = all_gather(w, i, over=n)
    return psum(sum(full * full), i)

spmd fn gathered_mean(w: [n/i]) -> []:
    let full = all_gather(w, i, over=n)
    return pmean(sum(full * full), i)

fn grads(w: [n]) -> ((f32, [n]), (f32, [n]), (f32, [n])):
    return value_and_grad(total, w), value_and_grad(gathered, w), value_and_grad(gathered_mean,
                                                                                 w)

fn main():
    let t, g, m = grads(to(arange(8), f32))
    print(t)
    print(g)
    print(m)
