# FSDP + TP on a 4x2 mesh (seeds/shard-map.md, "FSDP + TP, with shard_map
# at the top level"): the batch is split over batch and the features over
# feats; every param's first axis over both, feats major. Each layer
# all-gathers its params over batch (FSDP) and multiplies with a
# psum_scatter over feats (TP); the loss needs two reductions, a psum over
# feats and a pmean over batch.
import "nn.ss"

devices cpu
mesh batch=4 feats=2

spmd fn dense_fsdp_tp(w: [i/(feats batch) o], b: [o/(feats batch)],
                      x: [n/batch i/feats]) -> [n/batch o/feats]:
    let w_frag = all_gather(w, batch, over=i)
    let b_frag = all_gather(b, batch, over=o)
    let block_result = x @ w_frag
    return psum_scatter(block_result, feats, over=o) + b_frag

spmd fn predict_fsdp_tp(m: Net/(feats batch),
                        inputs: [n/batch D/feats]) -> [n/batch C/feats]:
    let h = relu(dense_fsdp_tp(m.l1.w, m.l1.b, inputs))
    h = relu(dense_fsdp_tp(m.l2.w, m.l2.b, h))
    h = relu(dense_fsdp_tp(m.l3.w, m.l3.b, h))
    h = relu(dense_fsdp_tp(m.l4.w, m.l4.b, h))
    h = relu(dense_fsdp_tp(m.l5.w, m.l5.b, h))
    return dense_fsdp_tp(m.l6.w, m.l6.b, h)

spmd fn loss_fsdp_tp(m: Net/(feats batch), inputs: [n/batch D/feats],
                     targets: [n/batch C/feats]) -> f32:
    let predict = remat(predict_fsdp_tp)
    let predictions = predict(m, inputs)
    let sq_err = psum(sum((predictions - targets) ** 2, over=-1), feats)
    return pmean(mean(sq_err), batch)

# The comparison is device work (a worker fn), so that on cpu[N] it can
# run on the workers while main prints and writes.
fn compare(m: Net, inputs: [N D], targets: [N C]) -> (Logs, Logs):
    let l, g = value_and_grad(loss, m, inputs, targets)
    let l_fsdp_tp, g_fsdp_tp = value_and_grad(loss_fsdp_tp, m, inputs, targets)
    return logs(loss=l, loss_fsdp_tp=l_fsdp_tp, grad_diff_norm=norm(g_fsdp_tp - g)), grad_logs(g_fsdp_tp)

fn main():
    let summary, grads = compare(init_net(), batch_inputs(), batch_targets())
    print(summary)
    let results = jsonl("nn_fsdp_tp.jsonl")
    results.write(summary)
    results.write(grads)
