# library.md's weak scalars: a host number beside tensors takes their
# dtype (torch's rule), whatever position it is in. where's condition is
# a bool tensor, and the number took the dtype an int or a float takes
# beside a bool: where(k > 0, k, 0) with an i32 k gave an i64 tensor
# (typeof said i32) and where(h > 0.0, h, 0.0) with an f16 h an f32 one.
# The dtypes below are torch.where's for the same operands (by hand:
# torch.where(k > 0, k, 0).dtype is torch.int32 for an int32 k).
# expect: ok
# output: [3] i32
# output: [0 1 2]
# output: [3] i32
# output: [0 0 0]
# output: [3] f16
# output: [0 1 2]
# output: [3] bf16
# output: [-1 1 2]
# output: [3] i32
# output: [0 7 7]

fn main():
    let k = to(arange(3), i32)
    print(where(k > 0, k, 0))
    print(where(k > 0, 0, k))
    let h = to(arange(3), f16)
    print(where(h > 0.0, h, 0.0))
    let b = to(arange(3), bf16)
    print(where(b > 0.0, b, -1.0))
    print(masked_fill(k, k > 0, 7))
