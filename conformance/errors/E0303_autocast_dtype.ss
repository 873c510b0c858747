# E0303: autocast runs products in bf16 or f16, as torch.autocast; f32 is
# what the fn already runs in.
# expect: error E0303 at 15:46

dim D = 8
dim C = 4

model Net:
    l: Linear[D C]

fn loss(m: Net, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(linear(m.l, x), y)

fn step(m: Net, x: [b D], y: [b] i64) -> f32:
    let l, g = value_and_grad(autocast(loss, f32), m, x, y)
    return l

fn main():
    print(step(Net.init(seed=0), ones([2 D]), zeros([2] i64)))
