"""What the examples/spmd oracles share: the examples' data (data.ss and
layers.ss rebuilt in numpy), the tutorial's network in PyTorch, and running
`ss run` on an example and comparing what it wrote with the oracle's
numbers.

Every example's main writes <name>.jsonl in its working directory: a line
of results (sink.write(logs(...))), for the nn_* examples a second line of
the strategy's gradients. Each oracle script computes the same numbers from
the same formulas, independently of ss (numpy for the matmuls, PyTorch in
float64 for the losses and gradients), and calls check().

`--devices SPEC` anywhere on a script's command line runs the example with
`ss run --devices SPEC` (cpu[<mesh size>]: an instance on each worker
process) instead of simulated on `devices cpu`; the oracle is the same.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

# --devices SPEC, taken off the command line before the script reads it.
DEVICES = None
if "--devices" in sys.argv:
    _at = sys.argv.index("--devices")
    DEVICES = sys.argv[_at + 1]
    del sys.argv[_at:_at + 2]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples", "spmd")

# layers.ss's sizes.
D, F, C, N = 16, 16, 8, 32


def ramp(n, step):
    """data.ss's ramp(arange(n), step): ((i * step) % 11) / 4 - 1.25."""
    i = np.arange(n, dtype=np.int64)
    return ((i * step) % 11).astype(np.float64) / 4.0 - 1.25


def layer(i, o, k):
    """layers.ss's set_layer(l, k) for a Layer[i o]: (w, b)."""
    return ramp(i * o, k + 2).reshape(i, o) / 4.0, ramp(o, k + 6) / 4.0


def net_layers():
    """nn.ss's init_net(): l1..l6 as (w, b) pairs."""
    sizes = [D, F, F, F, F, F, C]
    return [layer(sizes[k - 1], sizes[k], k) for k in range(1, 7)]


def batch():
    """layers.ss's batch_inputs() and batch_targets()."""
    return ramp(N * D, 3).reshape(N, D), ramp(N * C, 5).reshape(N, C)


def torch_loss_and_grads(params, inputs, targets):
    """The tutorial's loss (predict: dense layers with relu between them;
    mean over examples of the summed squared error) and its gradients with
    respect to every array in params (a list of (name, array)), in float64.
    predict's layer structure is given by the names: `<layer>.w`/`<layer>.b`
    pairs in order."""
    import torch
    ts = [(n, torch.tensor(a, dtype=torch.float64, requires_grad=True)) for n, a in params]
    h = torch.tensor(inputs, dtype=torch.float64)
    pairs = [(ts[k][1], ts[k + 1][1]) for k in range(0, len(ts), 2)]
    for j, (w, b) in enumerate(pairs):
        h = h @ w + b
        if j + 1 < len(pairs):
            h = torch.relu(h)
    y = torch.tensor(targets, dtype=torch.float64)
    loss = ((h - y) ** 2).sum(dim=-1).mean()
    loss.backward()
    return float(loss), {n: t.grad.numpy() for n, t in ts}


def run_example(ss, name):
    """Runs `ss run examples/spmd/<name>.ss` in a scratch folder; returns the
    lines of <name>.jsonl, each a dict of numpy arrays (and floats)."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [os.path.abspath(ss), "run", os.path.join(EXAMPLES, name + ".ss")]
        if DEVICES:
            cmd += ["--devices", DEVICES]
        p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=300)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            sys.exit(f"FAIL: ss run {name}.ss exited with {p.returncode}")
        with open(os.path.join(d, name + ".jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    return [{k: np.asarray(v, dtype=np.float64) for k, v in l.items() if k != "step"}
            for l in lines]


def check(got, want, tol, what):
    """Each array of want against got's, |got - want| <= tol * max(1,
    max |want|) (relative to the tensor's scale, so one large element does
    not loosen the check on the small ones less than on the others).
    Returns the failures as strings."""
    fails = []
    for k, w in want.items():
        w = np.asarray(w, dtype=np.float64)
        if k not in got:
            fails.append(f"{what}: {k} missing")
            continue
        g = got[k]
        if g.shape != w.shape:
            fails.append(f"{what}: {k} has shape {g.shape}, oracle {w.shape}")
            continue
        err = float(np.max(np.abs(g - w))) if w.size else 0.0
        bound = tol * max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
        status = "ok" if err <= bound else "FAIL"
        print(f"{status} {what} {k}: max |ss - oracle| = {err:.3g} (bound {bound:.3g})")
        if err > bound:
            fails.append(f"{what}: {k} off by {err:.3g} > {bound:.3g}")
    return fails


def finish(fails):
    if fails:
        for f in fails:
            print("FAIL:", f)
        sys.exit(1)
    print("PASS")
