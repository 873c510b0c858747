# `split H` through calls and ops (devices.md item 9, Note [Split heads]):
# a fn given values split by heads binds its sizes from each worker's
# heads (`scores`); an op along H runs on the heads gathered (softmax
# over=H, mean over H), a sum over H is each worker's partial sum
# all-reduced, a whole value with H inside a group after another axis
# ([b n (Dh H)]) is gathered; a split value returned to the controller
# comes back whole, and one sent from the controller is cut to each
# worker's heads. Every number printed must be one device's.
# expect: ok
# tolerance: 1e-5

devices cpu
    split H

dim D = 12
dim H = 6
dim Dh = 2

model Heads:
    w_qkv: [D (3 H Dh)] = normal(std=0.3)
    w_o: [(H Dh) D] = normal(std=0.3)

fn scores(q: [b H n Dh], k: [b H t Dh]) -> [b H n t]:
    return softmax(einsum(q, k, b H n Dh, b H t Dh -> b H n t), over=t)

fn heads(m: Heads, x: [b n D]) -> [b H n Dh]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    return einsum(scores(q, k), v, b H n t, b H t Dh -> b H n Dh)

fn mixed(m: Heads, x: [b n D]) -> [b n D]:
    let flat = rearrange(softmax(heads(m, x), over=H), b H n Dh -> b n (Dh H))
    return rearrange(flat, b n (Dh H) -> b n (H Dh)) @ m.w_o

fn pooled(o: [b H n Dh]) -> [b n Dh]:
    return mean(o, over=H) * sum(o, over=H)

fn loss(m: Heads, x: [b n D]) -> f32:
    let o = heads(m, x)
    return mean(mixed(m, x) ** 2) + mean(pooled(o)) + sum(o) * 0.01

fn step(mut m: Heads, mut opt: SGD[Heads], x: [b n D]) -> f32:
    let l, g = value_and_grad(loss, m, x)
    update(m, opt, g)
    return l

fn norms(o: [b H n Dh]) -> [b H n] = sum(o * o, over=Dh)

fn main():
    let m = Heads.init(seed=0)
    let opt = sgd(m, lr=0.2, momentum=0.5)
    let x = randn([2 3 D], seed=1)
    for i in range(3):
        print(float(step(m, opt, x)))
    # Gathered whole in the controller, and cut again where it is sent.
    let o = heads(m, x)
    print(float(sum(o * o)), float(sum(o[0])))
    print(float(sum(norms(o))), float(sum(m.w_o)))
