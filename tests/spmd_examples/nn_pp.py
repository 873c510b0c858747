#!/usr/bin/python3
"""Oracle for examples/spmd/nn_pp.ss, the GPipe-style pipeline: loss_pp and
its gradients must equal the plain loss's for nn_pp.ss's NetPP (first
layer, L = 4 stacked inner layers, last layer) and layers.ss's batch; the
oracle is that loss in PyTorch, float64, from the same formulas.

Tolerance as nn.py's (1e-5 of max(1, the tensor's largest magnitude)), for
the same reasons: f32 through 6 layers, sums in another order.
Usage: nn_pp.py SS_BINARY
"""
import sys

import numpy as np

import spmd_oracle as o

L = 4
first = o.layer(o.D, o.F, 1)  # nn.ss's l1
last = o.layer(o.F, o.C, 6)  # nn.ss's l6
inner_w = o.ramp(L * o.F * o.F, 4).reshape(L, o.F, o.F) / 4.0
inner_b = o.ramp(L * o.F, 8).reshape(L, o.F) / 4.0
params = [("first_w", first[0]), ("first_b", first[1])]
for j in range(L):
    params += [(f"inner{j}_w", inner_w[j]), (f"inner{j}_b", inner_b[j])]
params += [("last_w", last[0]), ("last_b", last[1])]
inputs, targets = o.batch()
loss, g = o.torch_loss_and_grads(params, inputs, targets)
grads = {"first_w": g["first_w"], "first_b": g["first_b"],
         "inner_w": np.stack([g[f"inner{j}_w"] for j in range(L)]),
         "inner_b": np.stack([g[f"inner{j}_b"] for j in range(L)]),
         "last_w": g["last_w"], "last_b": g["last_b"]}
results, got_grads = o.run_example(sys.argv[1], "nn_pp")
want = {"loss": loss, "loss_pp": loss, "grad_diff_norm": 0.0}
fails = o.check(results, want, 1e-5, "nn_pp")
fails += o.check(got_grads, grads, 1e-5, "nn_pp grad")
o.finish(fails)
