# A streamed dataset's item outside its field's domain. On several devices
# the controller only names the batch; each worker loads and checks its
# own rows (devices.md item 8), so the DomainError is found on a worker
# (item 7 of the second batch of 4: worker 1's on cpu[0 1], worker 2's on
# cpu[0 1 2]) and must come back as the error one device raises, at the
# loop, naming the same item (library.md, Data).
# expect: runtime DomainError

data Point:
    x: [3] in 0.0..=1.0

# Saved under its field's name, it is the points' file.
model Points:
    x: [8 3] = zeros()

model Lin:
    w: [3] = normal(std=1.0)

fn loss(m: Lin, batch: [b] Point) -> f32:
    return mean(batch.x @ m.w)

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Point) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

# Item 7 is outside 0..=1.
fn points() -> Points:
    let p = Points.init(seed=0)
    p.x = tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [0.5, 0.5, 0.5],
                  [0.2, 0.2, 0.2], [0.3, 0.3, 0.3], [0.1, 0.9, 0.4], [0.6, 1.5, 0.6]])
    return p

fn main():
    let p = points()
    save("points.safetensors", p)
    let ds = dataset(Point, "points.safetensors", stream=true)
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.1)
    for batch in ds.batches(4):
        print(step(m, opt, batch))
