# A main with no host effect (no print, no sink, no file) is itself a worker
# fn: on several devices it runs whole on every worker and the controller
# holds nothing at its end. Its final params, read from the workers, must
# be one device's, and every worker's copy the same (devices.md items 1, 5).
# expect: ok
# tolerance: 1e-5

dim D = 8
dim C = 3

model Classifier:
    w: [D C] = normal(std=0.5)

fn xent(m: Classifier, x: [b D], y: [b] i64) -> f32:
    return cross_entropy(x @ m.w, y)

fn train_step(mut m: Classifier, mut opt: SGD[Classifier], x: [b D],
              y: [b] i64) -> Logs:
    let l, g = value_and_grad(xent, m, x, y)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let m = Classifier.init(seed=0)
    let opt = sgd(m, lr=0.5, momentum=0.9)
    let x = randn([7 D], seed=1)
    let y = tensor([0, 1, 2, 0, 1, 2, 0])
    for step in range(5):
        train_step(m, opt, x, y)
