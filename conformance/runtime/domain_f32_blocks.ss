# The one f32 value outside its field's domain, in the second block of 64
# values the loader checks at a time (Note [A domain check at memory
# speed]): 180 values min(k / 100, 1), 1.0 from value 100 on, but value
# 101 (item 33) is 1.01. A check that skipped the block would find no
# value outside and load the dataset. The dataset is made from the file,
# so the check runs on it whole, as on the README's pixels.
# expect: runtime DomainError

dim N = 60

data Point:
    x: [3] in 0.0..=1.0

model Points:
    x: [N 3] = zeros()

fn points() -> Points:
    let p = Points.init(seed=0)
    let k = reshape(arange(180), [N, 3])
    p.x = minimum(to(k, f32) / 100.0, 1.0) + to(k == 101, f32) / 100.0
    return p

fn main():
    save("points.safetensors", points())
    let ds = dataset(Point, "points.safetensors")
    for batch in ds.batches(4):
        print(mean(batch.x))
