# A streamed dataset's field of the wrong dtype (f32 values for an i64
# label): found as a worker loads its rows, a ShapeError at the loop, the
# same as on one device (library.md, Data).
# expect: runtime ShapeError

dim D = 3
dim C = 10

data Item:
    x: [D]
    label: i64 in 0..C

# Saved under its fields' names, it is the items' file; its labels are f32.
model Items:
    x: [8 D] = normal(std=1.0)
    label: [8] = normal(std=1.0)

model Classifier:
    w: [D C] = normal(std=1.0)

fn train_step(mut m: Classifier, mut opt: AdamW[Classifier], batch: [b] Item) -> Logs:
    let l, g = value_and_grad(xent, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn xent(m: Classifier, batch: [b] Item) -> f32:
    return cross_entropy(batch.x @ m.w, batch.label)

fn main():
    save("items.safetensors", Items.init(seed=1))
    let ds = dataset(Item, "items.safetensors", stream=true)
    let m = Classifier.init(seed=0)
    let opt = adamw(m, lr=1e-2)
    let out = stdout()
    for batch in ds.batches(4):
        out.write(train_step(m, opt, batch))
