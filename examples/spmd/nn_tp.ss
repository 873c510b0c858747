# 8-way tensor parallelism (seeds/shard-map.md, "8-way tensor parallelism
# (TP)"): activations split over their feature axis, weights over their
# input features, biases over their features. gemm_tp is an spmd fn used as
# a library function from ordinary code: each call splits its whole
# arguments and joins its result, and psum_scatter sums the local products
# and leaves each instance its block of output features.
import "nn.ss"

devices cpu
mesh feats=8

spmd fn gemm_tp(inputs: [n d/feats], w: [d/feats o], b: [o/feats]) -> [n o/feats]:
    let block_result = inputs @ w
    return psum_scatter(block_result, feats, over=o) + b

fn dense_tp(l: Layer[i o], x: [n i]) -> [n o] = gemm_tp(x, l.w, l.b)

fn predict_tp(m: Net, inputs: [n D]) -> [n C]:
    let h = relu(dense_tp(m.l1, inputs))
    h = relu(dense_tp(m.l2, h))
    h = relu(dense_tp(m.l3, h))
    h = relu(dense_tp(m.l4, h))
    h = relu(dense_tp(m.l5, h))
    return dense_tp(m.l6, h)

fn loss_tp(m: Net, inputs: [n D], targets: [n C]) -> f32:
    let predictions = predict_tp(m, inputs)
    return mean(sum((predictions - targets) ** 2, over=-1))

# The comparison is device work (a worker fn), so that on cpu[N] it can
# run on the workers while main prints and writes.
fn compare(m: Net, inputs: [N D], targets: [N C]) -> (Logs, Logs):
    let l, g = value_and_grad(loss, m, inputs, targets)
    let l_tp, g_tp = value_and_grad(loss_tp, m, inputs, targets)
    return logs(loss=l, loss_tp=l_tp, grad_diff_norm=norm(g_tp - g)), grad_logs(g_tp)

fn main():
    let summary, grads = compare(init_net(), batch_inputs(), batch_targets())
    print(summary)
    let results = jsonl("nn_tp.jsonl")
    results.write(summary)
    results.write(grads)
