# The tutorial's toy network: six dense layers with relu between them,
# and the plain single-device `loss` every strategy is compared with.
import "layers.ss"

model Net:
    l1: Layer[D F]
    l2: Layer[F F]
    l3: Layer[F F]
    l4: Layer[F F]
    l5: Layer[F F]
    l6: Layer[F C]

fn predict(m: Net, inputs: [b D]) -> [b C]:
    let h = relu(dense(m.l1, inputs))
    h = relu(dense(m.l2, h))
    h = relu(dense(m.l3, h))
    h = relu(dense(m.l4, h))
    h = relu(dense(m.l5, h))
    return dense(m.l6, h)

fn loss(m: Net, inputs: [b D], targets: [b C]) -> f32:
    return mean(sum((predict(m, inputs) - targets) ** 2, over=-1))

# Each layer a different deterministic pattern (layers.ss's set_layer).
fn init_net() -> Net:
    let m = Net.init(seed=0)
    set_layer(m.l1, 1)
    set_layer(m.l2, 2)
    set_layer(m.l3, 3)
    set_layer(m.l4, 4)
    set_layer(m.l5, 5)
    set_layer(m.l6, 6)
    return m
