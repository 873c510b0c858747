# E0304: a generic fn is checked for every float dtype its variable can be
# (Note [Dtype variables]). Adding an f32 tensor to `[b D] T` keeps T for
# f32 and f64, but gives f32 for T = bf16 (torch.result_type), which is not
# the declared `[b D] T`: reported at the return, in the instance T = bf16.
# expect: error E0304 at 10:12

dim D = 4

fn shift(x: [b D] T) -> [b D] T:
    return x + ones([D])

fn main():
    print(shift(ones([2 D] f64)))
