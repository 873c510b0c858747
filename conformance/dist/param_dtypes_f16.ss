# f16 params on several devices (issue 10 item 6: the gradient all-reduce
# refused bf16 and f16). An MLP whose params are f16, trained with SGD with
# momentum; every worker's copy must stay equal and the run must be one
# device's. f16 all-reduces sum in f32 and round once (Note [Half-precision
# reductions] in dist/comm/communicator.cpp); f64 goes as it is.
# Tolerance: f16 keeps 11 significant bits (2^-12 = 2.4e-4 per value); each
# share's gradient is rounded to f16 before the sum, so an update can differ
# by an ulp, compounding over 5 steps; measured worst 8.5e-4 relative on
# cpu[0 1].
# expect: ok
# tolerance: 5e-3

dim D = 784
dim Hd = 16
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] f16 = normal(std=1 / sqrt(D))
    w2: [Hd C] f16 = normal(std=1 / sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C] f16:
    return relu(to(x, f16) @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return to(cross_entropy(forward(m, batch.img), batch.label), f32)

fn train_step(mut m: Mlp, mut opt: SGD[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, gnorm=to(norm(g), f32))

fn main():
    let m = Mlp.init(seed=0)
    let opt = sgd(m, lr=0.1, momentum=0.9)
    let out = stdout()
    for batch in synthetic_digits(Digit, 80, seed=3).batches(16, shuffle=1):
        out.write(train_step(m, opt, batch))
    print(float(sum(to(m.w1, f32) * to(m.w1, f32))), float(sum(to(m.w2, f32))))
