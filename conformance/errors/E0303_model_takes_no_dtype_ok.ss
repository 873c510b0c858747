# The fix for E0303_model_takes_no_dtype: Head is generic over its dtype,
# so `Head f64` makes its field f64.
# expect: ok

dim D = 4
dim C = 2

model Head T:
    w: [D C] T = normal(std=0.1)

model Net:
    l: Linear[D D] f64
    head: Head f64

fn main():
    let m = Net.init(seed=0)
    print(m.head.w)
