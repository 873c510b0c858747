# The fix for E0201_unknown_axis: the size variable is named as in the type.
# expect: ok

dim D = 128

# The mean over a sequence's positions.
fn mean_pool(x: [b n D]) -> [b D]:
    return sum(x, over=n) / size(x, n)

fn main():
    print(mean_pool(randn([4 16 D], seed=0)))
