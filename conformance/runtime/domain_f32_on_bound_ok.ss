# Values on the closed bound of their field's domain, in full blocks of 64
# values the loader checks at a time (Note [A domain check at memory
# speed]): 180 values min(k / 100, 1), so values 100..179 are 1.0 exactly,
# inside 0.0..=1.0, and the dataset loads; the mean of the first batch of
# 4 items (values 0..11) is 0.055.
# expect: ok
# output: f32 0.055

dim N = 60

data Point:
    x: [3] in 0.0..=1.0

model Points:
    x: [N 3] = zeros()

fn points() -> Points:
    let p = Points.init(seed=0)
    p.x = minimum(to(reshape(arange(180), [N, 3]), f32) / 100.0, 1.0)
    return p

fn main():
    save("points.safetensors", points())
    let ds = dataset(Point, "points.safetensors")
    for batch in ds.take(4).batches(4):
        print(mean(batch.x))
