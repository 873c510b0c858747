# The fix for E0303_autocast_dtype: bf16, as torch.autocast("cpu",
# dtype=torch.bfloat16).
# expect: ok

dim D = 8
dim C = 4

model Net:
    l: Linear[D C]

fn loss(m: Net, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(linear(m.l, x), y)

fn step(m: Net, x: [b D], y: [b] i64) -> f32:
    let l, g = value_and_grad(autocast(loss, bf16), m, x, y)
    return l

fn main():
    print(step(Net.init(seed=0), ones([2 D]), zeros([2] i64)))
