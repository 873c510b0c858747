#!/usr/bin/python3
"""The shard_map tutorial's neural-network strategies (spmd.md, Autodiff:
"the gradients of loss_dp, loss_fsdp, loss_tp, loss_fsdp_tp equal the
single-device loss's") on a 2-layer MLP in f64, run simulated by `ss run`
and compared with torch's autograd of the plain loss, the same inputs
passed exactly through in.safetensors: the loss and every gradient within
1e-10 (relative to the value plus its rms; f64 sums of a few dozen
products, whose order differs between the strategies and torch).

Usage: spmd_strategies.py SS_BINARY
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ss_runner import close, run_ss  # noqa: E402

RTOL = 1e-10

PRELUDE = """
dim D = 8
dim H = 8
dim C = 8

model In:
    w1: [D H] f64 = zeros()
    b1: [H] f64 = zeros()
    w2: [H C] f64 = zeros()
    b2: [C] f64 = zeros()
    buffer x: [8 D] f64 = zeros()
    buffer y: [8 C] f64 = zeros()

fn local_loss(w1: [D H] f64, b1: [H] f64, w2: [H C] f64, b2: [C] f64, x: [n D] f64, y: [n C] f64) -> f64:
    let e = relu(x @ w1 + b1) @ w2 + b2 - y
    return mean(sum(e * e, over=C))
"""

MAIN = """
fn main():
    let m = load("in.safetensors", In)
    let l, g = value_and_grad(loss, m)
    jsonl("out.jsonl").write(logs(loss=l, w1=g.w1, b1=g.b1, w2=g.w2, b2=g.b2))
"""

STRATEGIES = {
    "plain": """
fn loss(m: In) -> f64:
    return local_loss(m.w1, m.b1, m.w2, m.b2, m.x, m.y)
""",
    # 8-way data parallel in the tutorial; 4 instances here.
    "data_parallel": """
mesh batch=4

spmd fn loss_dp(w1: [D H] f64, b1: [H] f64, w2: [H C] f64, b2: [C] f64, x: [n/batch D] f64, y: [n/batch C] f64) -> f64:
    return pmean(local_loss(w1, b1, w2, b2, x, y), batch)

fn loss(m: In) -> f64:
    return loss_dp(m.w1, m.b1, m.w2, m.b2, m.x, m.y)
""",
    # The params split too, gathered just before their use.
    "fsdp": """
mesh batch=4

spmd fn loss_fsdp(w1: [D/batch H] f64, b1: [H/batch] f64, w2: [H/batch C] f64, b2: [C/batch] f64, x: [n/batch D] f64, y: [n/batch C] f64) -> f64:
    let l = local_loss(all_gather(w1, batch, over=D), all_gather(b1, batch, over=H), all_gather(w2, batch, over=H), all_gather(b2, batch, over=C), x, y)
    return pmean(l, batch)

fn loss(m: In) -> f64:
    return loss_fsdp(m.w1, m.b1, m.w2, m.b2, m.x, m.y)
""",
    # gemm_tp: features split, psum_scatter of the local products; the
    # loss in ordinary code on the joined activations.
    "tensor_parallel": """
mesh feats=2

spmd fn gemm_tp(x: [b d/feats] f64, w: [d/feats h] f64, bias: [h/feats] f64) -> [b h/feats] f64:
    return psum_scatter(x @ w, feats, over=h) + bias

fn loss(m: In) -> f64:
    let h = relu(gemm_tp(m.x, m.w1, m.b1))
    let e = gemm_tp(h, m.w2, m.b2) - m.y
    return mean(sum(e * e, over=C))
""",
    # loss_fsdp_tp on the tutorial's 4x2 mesh: params split over
    # (feats batch), the batch over batch and its features over feats.
    "fsdp_tp": """
mesh batch=4 feats=2

spmd fn layer(x: [n/batch d/feats] f64, w: [d/(feats batch) h] f64, b: [h/(feats batch)] f64) -> [n/batch h/feats] f64:
    let wg = all_gather(w, batch, over=d)
    let bg = all_gather(b, batch, over=h)
    return psum_scatter(x @ wg, feats, over=h) + bg

spmd fn loss_fsdp_tp(w1: [D/(feats batch) H] f64, b1: [H/(feats batch)] f64, w2: [H/(feats batch) C] f64, b2: [C/(feats batch)] f64, x: [n/batch D/feats] f64, y: [n/batch C/feats] f64) -> f64:
    let p = layer(relu(layer(x, w1, b1)), w2, b2)
    let e = p - y
    let sq = psum(sum(e * e, over=C), feats)
    return pmean(mean(sq), batch)

fn loss(m: In) -> f64:
    return loss_fsdp_tp(m.w1, m.b1, m.w2, m.b2, m.x, m.y)
""",
}


def inputs():
    g = np.random.default_rng(13)
    return {"w1": g.standard_normal((8, 8)) / np.sqrt(8),
            "b1": g.standard_normal(8),
            "w2": g.standard_normal((8, 8)) / np.sqrt(8),
            "b2": g.standard_normal(8),
            "x": g.standard_normal((8, 8)),
            "y": g.standard_normal((8, 8))}


def torch_reference(a):
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k not in
                         ("x", "y")) for k, v in a.items()}
    e = torch.relu(t["x"] @ t["w1"] + t["b1"]) @ t["w2"] + t["b2"] - t["y"]
    loss = torch.mean(torch.sum(e * e, dim=-1))
    loss.backward()
    out = {"loss": loss.detach().numpy()}
    for k in ("w1", "b1", "w2", "b2"):
        out[k] = t[k].grad.numpy()
    return out


def main():
    ss = os.path.abspath(sys.argv[1])
    a = inputs()
    want = torch_reference(a)
    errors = []
    for name, body in STRATEGIES.items():
        r = run_ss(ss, PRELUDE + body + MAIN, a)
        if isinstance(r, str):
            errors.append(f"{name}: {r}")
            continue
        got = r[0][0]
        for k, w in want.items():
            e = close(np.asarray(got[k], dtype=np.float64), w, RTOL)
            if e:
                errors.append(f"{name}: {k}: {e}")
        print(f"{name}: loss {got['loss']!r} (torch {float(want['loss'])!r})")
    for e in errors:
        print("FAIL", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
