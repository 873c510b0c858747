# clip_norm of one tensor (its rule takes one, as torch's clip_grad_norm_
# does) scales it by max / (norm + 1e-6) when that is below 1; it crashed
# (issue 32's runtime fuzzer), reading the tensor as a model. torch:
# clip_grad_norm_ of [3 4] with max 1 (norm 5) leaves [0.6 0.8]; with max
# 10 it leaves [3 4] alone.
# expect: ok
# output: [2] f32
# output: [0.6 0.8]
# output: [2] f32
# output: [3 4]

fn main():
    print(clip_norm(tensor([3.0, 4.0]), 1.0))
    print(clip_norm(tensor([3.0, 4.0]), 10.0))
