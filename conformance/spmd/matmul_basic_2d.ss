# The tutorial's matmul_basic on mesh x=4 y=2 with its a = arange(8·16) as
# [8 16] and b = arange(16·4) as [16 4]: a split [m/x k/y], b [k/y n], the
# local products summed over y. numpy's a @ b has row 0 [4960 5080 5200
# 5320], row 7 [58720 60632 62544 64456] and sum 1067648.
# expect: ok
# output: [4] f32
# output: [4960 5080 5200 5320]
# output: [4] f32
# output: [5.872e+04 6.063e+04 6.254e+04 6.446e+04]
# output: 1067648.0

devices cpu
mesh x=4 y=2

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

fn main():
    let a = to(reshape(arange(128), [8, 16]), f32)
    let b = to(reshape(arange(64), [16, 4]), f32)
    let c = matmul_basic(a, b)
    print(c[0])
    print(c[7])
    print(float(sum(c)))
