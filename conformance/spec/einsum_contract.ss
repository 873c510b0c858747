# einsum contracts a label two operands share (issue 10, item 1): with
# a = [[0 1 2 3] [4 5 6 7]] and c = a / 2, out[n t] = sum over d of
# a[n d] c[t d] is [[7 19] [19 63]] (row 0 with row 0: (0 + 1 + 4 + 9) / 2).
# The bug summed d on each side first: [[18 66] [66 242]]. The runner only
# checks that this runs; interp/tests/patterns_eval_test.cpp asserts the
# numbers.
# expect: ok

fn scores(a: [n d] f64, c: [t d] f64) -> [n t] f64:
    return einsum(a, c, n d, t d -> n t)

fn main():
    let a = tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]], f64)
    let c = a / 2.0
    print(scores(a, c))
