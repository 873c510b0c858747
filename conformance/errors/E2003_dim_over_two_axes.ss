# A dim split over (x y), 8 instances: K = 12 is not a multiple of 8.
# expect: error E2003 at 14:18

devices cpu
mesh x=4 y=2

dim K = 12

spmd fn double(a: [K/(x y)]) -> [K/(x y)]:
    return a * 2.0

fn main():
    let a = randn([K], seed=0)
    print(double(a))
