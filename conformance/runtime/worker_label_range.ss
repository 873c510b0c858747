# A label out of range in a worker fn's cross_entropy (the bad label is in
# the second half of the batch: another worker's share on cpu[0 1] and
# cpu[0 1 2]): the ValueError comes back from the workers with the
# location and the .ss stack one device gives.
# expect: runtime ValueError

dim D = 3
dim C = 4

model Lin:
    w: [D C] = normal(std=1.0)

fn loss(m: Lin, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(x @ m.w, y)

fn main():
    let m = Lin.init(seed=0)
    print(loss(m, ones([6 D]), tensor([0, 1, 2, 3, 9, 1])))
