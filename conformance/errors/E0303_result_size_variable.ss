# A result that reduced away the wrong axis: the fn's own size variable
# `b` is itself in its body, so [C] where [b] is declared is E0303 at the
# return (not E0307, which is a call binding one variable to two sizes).
# expect: error E0303 at 9:12

dim C = 4

fn f(z: [b C]) -> [b]:
    return mean(z, over=b)

fn main():
    print(f(zeros([3 C])))
