# 8-way fully sharded data parallelism (seeds/shard-map.md, "8-way fully
# sharded data parallelism (FSDP)"): the batch and every param's first axis
# are split over the mesh. Each layer all-gathers its params just before
# use; remat makes the backward pass gather them again instead of keeping
# the gathered copies (all_gather's transpose, psum_scatter, hands each
# instance the summed gradient of its own fragment).
import "nn.ss"

devices cpu
mesh batch=8

# One layer on gathered params: w's rows and b are fragments.
spmd fn dense_fsdp(w: [i/batch o], b: [o/batch], x: [n/batch i]) -> [n/batch o]:
    let w_whole = all_gather(w, batch, over=i)
    let b_whole = all_gather(b, batch, over=o)
    return x @ w_whole + b_whole

spmd fn predict_fsdp(m: Net/batch, inputs: [n/batch D]) -> [n/batch C]:
    let h = relu(dense_fsdp(m.l1.w, m.l1.b, inputs))
    h = relu(dense_fsdp(m.l2.w, m.l2.b, h))
    h = relu(dense_fsdp(m.l3.w, m.l3.b, h))
    h = relu(dense_fsdp(m.l4.w, m.l4.b, h))
    h = relu(dense_fsdp(m.l5.w, m.l5.b, h))
    return dense_fsdp(m.l6.w, m.l6.b, h)

spmd fn loss_fsdp(m: Net/batch, inputs: [n/batch D], targets: [n/batch C]) -> f32:
    let predict = remat(predict_fsdp)
    let predictions = predict(m, inputs)
    let local_loss = mean(sum((predictions - targets) ** 2, over=-1))
    return pmean(local_loss, batch)

# The comparison is device work (a worker fn), so that on cpu[N] it can
# run on the workers while main prints and writes.
fn compare(m: Net, inputs: [N D], targets: [N C]) -> (Logs, Logs):
    let l, g = value_and_grad(loss, m, inputs, targets)
    let l_fsdp, g_fsdp = value_and_grad(loss_fsdp, m, inputs, targets)
    return logs(loss=l, loss_fsdp=l_fsdp, grad_diff_norm=norm(g_fsdp - g)), grad_logs(g_fsdp)

fn main():
    let summary, grads = compare(init_net(), batch_inputs(), batch_targets())
    print(summary)
    let results = jsonl("nn_fsdp.jsonl")
    results.write(summary)
    results.write(grads)
