# A batch parameter split over a mesh axis (`batch: [b/x] Digit`): each
# instance gets its rows of every field (here 2 of the 4), so the psum of
# the instances' label sums is the batch's: 8 + 3 + 0 + 8 = 19 for the
# labels main prints. (The batch was passed whole before: each instance
# saw 4 rows and the psum was 38.)
# expect: ok
# output: [4] i64 (b=4)
# output: [8 3 0 8]
# output: [x=0] 2
# output: [x=1] 2
# output: f32 19

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

fn main():
    for batch in synthetic_digits(Digit, 4, seed=1).batches(4):
        print(batch.label)
        print(count(batch))
