# A streamed dataset's field of the wrong dtype (f32 values for an i64
# field): found as a worker loads its rows, a ShapeError at the loop, the
# same as on one device (library.md, Data).
# expect: runtime ShapeError

dim D = 3

data Item:
    x: [D]
    label: i64 in 0..10

model Items:
    x: [8 D] = normal(std=1.0)
    label: [8] = normal(std=1.0)

model Lin:
    w: [D] = normal(std=1.0)

fn loss(m: Lin, batch: [b] Item) -> f32:
    return mean(batch.x @ m.w)

fn step(mut m: Lin, mut opt: SGD[Lin], batch: [b] Item) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    save("items.safetensors", Items.init(seed=1))
    let ds = dataset(Item, "items.safetensors", stream=true)
    let m = Lin.init(seed=0)
    let opt = sgd(m, lr=0.1)
    for batch in ds.batches(4):
        print(step(m, opt, batch))
