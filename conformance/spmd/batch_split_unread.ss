# A batch main never reads, given to an spmd fn (`count`) and to a worker
# fn that calls one (`twice`): on cpu[2] the controller loads the first
# to cut it into the instances' rows, and the worker fn gets the second
# whole on every worker (a mesh program splits no batch), each instance
# taking its 2 rows. The labels are batch_split.ss's, [8 3 0 8]: the psum
# of the instances' sums is 19, and twice that 38.
# expect: ok
# output: [x=0] 2
# output: [x=1] 2
# output: f32 19
# output: f32 38

devices cpu
mesh x=2

dim D = 784
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

spmd fn count(batch: [b/x] Digit) -> []:
    print(size(batch.img, b))
    return psum(to(sum(batch.label), f32), x)

spmd fn total(batch: [b/x] Digit) -> []:
    return psum(to(sum(batch.label), f32), x)

fn twice(batch: [b] Digit) -> []:
    return total(batch) * 2.0

fn main():
    for batch in synthetic_digits(Digit, 4, seed=1).batches(4):
        print(count(batch))
        print(twice(batch))
