# E0201: an axis name that is not a dim or an axis in scope. `size(x, A)`
# looks A up among axes only; this fn's axes are b, n and D (not N).
# expect: error E0201 at 9:37

dim D = 128

# The mean over a sequence's positions.
fn mean_pool(x: [b n D]) -> [b D]:
    return sum(x, over=n) / size(x, N)

fn main():
    print(mean_pool(randn([4 16 D], seed=0)))
