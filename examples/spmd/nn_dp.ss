# 8-way batch data parallelism (seeds/shard-map.md, "8-way batch data
# parallelism"): the batch is split over the mesh, the params replicated;
# each instance computes its examples' mean loss with the plain `loss`, and
# pmean over batch makes the total. The backward pass all-reduces the
# param gradients (pmean's transpose).
import "nn.ss"

devices cpu
mesh batch=8

spmd fn loss_dp(m: Net, inputs: [n/batch D], targets: [n/batch C]) -> f32:
    let local_loss = loss(m, inputs, targets)
    return pmean(local_loss, batch)

# The comparison is device work (a worker fn), so that on cpu[N] it can
# run on the workers while main prints and writes.
fn compare(m: Net, inputs: [N D], targets: [N C]) -> (Logs, Logs):
    let l, g = value_and_grad(loss, m, inputs, targets)
    let l_dp, g_dp = value_and_grad(loss_dp, m, inputs, targets)
    return logs(loss=l, loss_dp=l_dp, grad_diff_norm=norm(g_dp - g)), grad_logs(g_dp)

fn main():
    let summary, grads = compare(init_net(), batch_inputs(), batch_targets())
    print(summary)
    let results = jsonl("nn_dp.jsonl")
    results.write(summary)
    results.write(grads)
