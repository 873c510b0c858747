# torch.nn.functional's convolution options in a small ResNet-style step
# on several devices: a conv with bias=, a depthwise conv (groups=C), a
# dilated one, a strided max pool with padding, a transposed conv back up,
# conv1d over the flattened image and adaptive_avg_pool2d to 1x1 before the head. Each is
# per example: every rank runs its share's images. Uneven batches (11 in
# fours: a last batch of 3).
# expect: ok
# tolerance: 1e-5

dim D = 784
dim S = 28
dim C = 4
dim K = 10

data Img:
    x: [D] in 0.0..=1.0
    label: i64 in 0..K

model Net:
    k1: [C 1 3 3] = normal(std=0.2)
    b1: [C] = zeros()
    dw: [C 1 3 3] = normal(std=0.2)
    kd: [C C 3 3] = normal(std=0.2)
    kt: [C C 2 2] = normal(std=0.2)
    k1d: [C C 3] = normal(std=0.2)
    head: [C K] = normal(std=0.2)

fn features(m: Net, batch: [b] Img) -> [b C]:
    let img = reshape(batch.x, [b, 1, S, S])
    let h = relu(conv2d(img, m.k1, padding=1, bias=m.b1))
    let d = conv2d(h, m.dw, padding=1, groups=4) + conv2d(h, m.kd, padding=2,
                                                          dilation=2)
    let p = max_pool2d(d, 3, stride=2, padding=1)
    let u = conv_transpose2d(p, m.kt, stride=2)
    let pooled = adaptive_avg_pool2d(avg_pool2d(u, 3, stride=1, padding=1), 1)
    let flat = rearrange(u, b c h w -> b c (h w))
    let rows = mean(conv1d(flat, m.k1d, padding=1, stride=2), over=-1)
    return rearrange(pooled, b c 1 1 -> b c) + rows

fn loss(m: Net, batch: [b] Img) -> f32:
    return cross_entropy(features(m, batch) @ m.head, batch.label)

fn step(mut m: Net, mut opt: SGD[Net], batch: [b] Img) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let data = synthetic_digits(Img, 11, seed=7)
    let m = Net.init(seed=8)
    let opt = sgd(m, lr=0.1)
    for batch in data.batches(4):
        print(step(m, opt, batch))
