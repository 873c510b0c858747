# Both options (devices.md item 9): with `shard params` and `split H` the
# params with an axis of size H are split along it (w_o's rows, the
# bias bo of [(H Dh)]), the others sharded, each worker holding a
# padded piece (w_qkv, w_in, the Linear out). Trained with SGD and
# momentum (its buffers split and sharded as their params), a residual
# around the heads through the sharded w_in; a checkpoint saved mid-way is
# the one-device file, and loaded again (cut to heads and pieces) it
# trains on as the saved model would.
# expect: ok
# tolerance: 1e-5

devices cpu
    shard params
    split H

dim D = 20
dim H = 6
dim Dh = 4

model Net:
    w_in: [D D] = normal(std=0.2)
    w_qkv: [D (3 H Dh)] = normal(std=0.2)
    bo: [(H Dh)] = normal(std=0.1)
    w_o: [(H Dh) D] = normal(std=0.2)
    out: Linear[D D]

fn heads(m: Net, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let o = einsum(softmax(s, over=t), v, b H n t, b H t Dh -> b H n Dh)
    return (tanh(rearrange(o, b H n Dh -> b n (H Dh))) + m.bo) @ m.w_o

fn loss(m: Net, x: [b n D], y: [b n D]) -> f32:
    let h = tanh(x @ m.w_in)
    return mse(linear(m.out, h + heads(m, h)), y)

fn step(mut m: Net, mut opt: SGD[Net], x: [b n D], y: [b n D]) -> Logs:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, clip_norm(g, 2.0))
    return logs(loss=l, grad_norm=norm(g))

fn main():
    let m = Net.init(seed=3)
    let opt = sgd(m, lr=0.1, momentum=0.9, weight_decay=0.01)
    let x = randn([3 5 D], seed=4)
    let y = randn([3 5 D], seed=5)
    let out = stdout()
    for i in range(4):
        out.write(step(m, opt, x, y))
    save("mid.safetensors", m, opt)
    let m2, opt2 = load("mid.safetensors", Net, sgd)
    for i in range(3):
        out.write(step(m2, opt2, x, y))
    print(float(sum(m2.w_o)), float(sum(m2.bo)), float(sum(m2.w_in)), opt2.step)
    save("final.safetensors", m2, opt2)
