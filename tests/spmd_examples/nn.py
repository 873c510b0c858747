#!/usr/bin/python3
"""Oracle for the tutorial's data-, tensor- and fully-sharded strategies
(examples/spmd/nn_dp.ss, nn_fsdp.ss, nn_tp.ss, nn_fsdp_tp.ss): each
computes loss_<strategy> and its gradients for nn.ss's network and batch,
which must equal the plain loss's; the oracle is that loss and its
gradients in PyTorch, float64 (spmd_oracle.torch_loss_and_grads), from the
same formulas (layers.ss, nn.ss).

Checked: the program's plain `loss`, its loss_<strategy>, every gradient of
loss_<strategy>, and the norm of its difference from the plain gradients
(0), each within 1e-5 of max(1, the tensor's largest magnitude). Why 1e-5:
the program computes in f32 (epsilon 6e-8) through 6 layers of 16-term dot
products forward and backward, and the instances sum in another order
than one device; the plain f32 run is within 1e-7 of float64 here, so 1e-5
leaves two orders of margin and still catches any wrong block or a missing
collective, which move the results by 1e-2 or more.
Usage: nn.py SS_BINARY STRATEGY (dp, fsdp, tp or fsdp_tp)
"""
import sys

import spmd_oracle as o

strategy = sys.argv[2]
name = "nn_" + strategy
inputs, targets = o.batch()
params = []
for k, (w, b) in enumerate(o.net_layers(), 1):
    params += [(f"l{k}_w", w), (f"l{k}_b", b)]
loss, grads = o.torch_loss_and_grads(params, inputs, targets)
results, got_grads = o.run_example(sys.argv[1], name)
want = {"loss": loss, "loss_" + strategy: loss, "grad_diff_norm": 0.0}
fails = o.check(results, want, 1e-5, name)
fails += o.check(got_grads, grads, 1e-5, name + " grad")
o.finish(fails)
