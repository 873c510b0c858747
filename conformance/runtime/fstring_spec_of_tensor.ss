# A format spec formats one number (issue 32's runtime fuzzer): a tensor
# of one element formats as its value, as numpy's does (np.array([1.5])
# under f"{:.2f}" is "1.50"), but one of several values is a ValueError at
# the value, as numpy refuses it ("unsupported format string passed to
# numpy.ndarray.__format__"), where `f"{x:.3f}"` printed 0.000 for any x.
# expect: runtime ValueError
# output: 1.50
# output: -2.5000

fn main():
    let x = to(arange(5), f32) - 2.0
    print(f"{tensor([1.5]):.2f}")
    print(f"{sum(x) - 2.5:.4f}")
    print(f"{x:.3f}")
