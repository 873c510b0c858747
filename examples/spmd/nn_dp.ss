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

fn main():
    let m = init_net()
    let inputs = batch_inputs()
    let targets = batch_targets()
    let l, g = value_and_grad(loss, m, inputs, targets)
    let l_dp, g_dp = value_and_grad(loss_dp, m, inputs, targets)
    let diff = norm(g_dp - g)
    print(f"loss {l} loss_dp {l_dp} grad_diff_norm {diff}")
    let results = jsonl("nn_dp.jsonl")
    results.write(logs(loss=l, loss_dp=l_dp, grad_diff_norm=diff))
    results.write(grad_logs(g_dp))
