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

# Layer k's w is ramp(arange(I * O), k + 2) / 4 and its b is
# ramp(arange(O), k + 6) / 4: every tensor a different pattern. (The sizes
# are written out: a size variable in reshape's list does not run yet.)
fn init_net() -> Net:
    let m = Net.init(seed=0)
    m.l1.w = reshape(ramp(arange(D * F), 3), [D, F]) / 4.0
    m.l1.b = reshape(ramp(arange(F), 7), [F]) / 4.0
    m.l2.w = reshape(ramp(arange(F * F), 4), [F, F]) / 4.0
    m.l2.b = reshape(ramp(arange(F), 8), [F]) / 4.0
    m.l3.w = reshape(ramp(arange(F * F), 5), [F, F]) / 4.0
    m.l3.b = reshape(ramp(arange(F), 9), [F]) / 4.0
    m.l4.w = reshape(ramp(arange(F * F), 6), [F, F]) / 4.0
    m.l4.b = reshape(ramp(arange(F), 10), [F]) / 4.0
    m.l5.w = reshape(ramp(arange(F * F), 7), [F, F]) / 4.0
    m.l5.b = reshape(ramp(arange(F), 11), [F]) / 4.0
    m.l6.w = reshape(ramp(arange(F * C), 8), [F, C]) / 4.0
    m.l6.b = reshape(ramp(arange(C), 12), [C]) / 4.0
    return m

# Every gradient by its field's path, for the examples' results files.
fn grad_logs(g: Grads[Net]) -> Logs:
    return logs(l1_w=g.l1.w, l1_b=g.l1.b, l2_w=g.l2.w, l2_b=g.l2.b, l3_w=g.l3.w,
                l3_b=g.l3.b, l4_w=g.l4.w, l4_b=g.l4.b, l5_w=g.l5.w, l5_b=g.l5.b,
                l6_w=g.l6.w, l6_b=g.l6.b)
