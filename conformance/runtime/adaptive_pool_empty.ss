# adaptive_avg_pool2d of an input with an empty h or w is a ValueError, as
# torch's ("expected input to have non-zero size for non-batch
# dimensions"): each output would average nothing, and to a size of
# 2^53 + 1 the empty window matrix took 2^53 steps to make (issue 32's
# runtime fuzzer: a hang).
# expect: runtime ValueError

fn main():
    let x = full([len(range(0)), 3], 1.0)
    print(adaptive_avg_pool2d(x, 9007199254740993))
