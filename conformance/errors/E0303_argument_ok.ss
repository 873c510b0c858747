# The fix for E0303_argument: classify gets the hidden features.
# expect: ok

dim D = 784
dim Hd = 256
dim C = 10

model Mlp:
    w1: [D Hd] = normal(std=1 / sqrt(D))
    w2: [Hd C] = normal(std=1 / sqrt(Hd))

fn embed(m: Mlp, x: [b D]) -> [b Hd]:
    return relu(x @ m.w1)

fn classify(m: Mlp, h: [b Hd]) -> [b C]:
    return h @ m.w2

fn forward(m: Mlp, x: [b D]) -> [b C]:
    let h = embed(m, x)
    return classify(m, h)
