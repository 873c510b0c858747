#!/usr/bin/python3
"""Deterministic mode's cost (issue 28; Note [Deterministic mode] in
interp/devices/lower/chunks.h): a train step with `deterministic` against
the same step without it, through `ss run`, on `cpu` (one process) and
`cpu[0 1 2]` (three worker processes).

  * the README MLP (compare_pytorch.py's program and data, AdamW), at
    batch 64 and 6144;
  * the examples' transformer block (causal attention, GELU MLP, layer
    norms, dropout, two stacked blocks; T = 32, D = 128, AdamW), at batch
    64 and 512: at 6144 one step holds 25M values per activation, too many
    for these machines' memory and minutes.

Each step time comes from progress()'s summary (the loop alone, after one
untimed step). Each configuration runs --repeats pairs, the default and
the deterministic run back to back, their order alternating; the figure is
the median of the pairs' ratios. The load average is printed before and
after: these machines are shared. Target: at most 1.15x.

Measured 2026-12-04 (2 cores, load ~2.5, medians of 3 pairs; C = 8 at
batch 64, 512 at 6144, 32 at 512), deterministic / default ms, and the
median of the pairs' ratios:
    mlp          cpu    64:  1.55 /  0.45  3.44x   cpu3   64:  7.50 /  3.15  2.35x
    mlp          cpu  6144:  56.5 /  34.0  1.66x   cpu3 6144:  45.0 /  40.0  1.11x
    transformer  cpu    64:  86.0 /  63.0  1.37x   cpu3   64:  64.0 /  56.5  1.15x
    transformer  cpu   512:  1060 /  1110  1.05x   cpu3  512:   434 /   440  0.95x
One device in the mode runs products on one BLAS thread (Note [One BLAS
thread]) where the default one-device run has two: most of the 1.66x at
6144. At batch 64 the MLP's step is under a millisecond and its 8 chunks
make 8 products of 8 rows each: the evaluator's cost per op, 8 times.
Benchmarks report, tests assert: nothing here fails a build. Run:
    /usr/bin/python3 bench/deterministic_bench.py [--ss build/ss] [--repeats 5]
        [--only mlp|transformer]
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ddp  # noqa: E402
from compare_pytorch import make_inputs  # noqa: E402
import safetensors_io  # noqa: E402

# The timed loop after one untimed step on the first batch.
MLP = compare_ddp.WARM_PROGRAM

TRANSFORMER = """
dim T = 32
dim D = 128
dim H = 4
dim Dh = 32
dim F = 512
dim L = 2
dim B = 64

data Seq:
    x: [T D]
    y: [T D]

model Block:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)
    up: Linear[D F]
    down: Linear[F D]

model Transformer:
    pos: [T D] = normal(std=0.02)
    blocks: [L] Block
    head: Linear[D D]

fn attention(blk: Block, x: [b n D], mode: Mode) -> [b n D]:
    let q, k, v = split(x @ blk.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(dropout(p, 0.1, mode), v, b H n t, b H t Dh -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ blk.w_o

fn block(blk: Block, x: [b n D], mode: Mode) -> [b n D]:
    let h = x + attention(blk, layer_norm(x, over=D), mode)
    return h + dropout(linear(blk.down, gelu(linear(blk.up, layer_norm(h, over=D)))), 0.1, mode)

fn loss(m: Transformer, s: [b] Seq, mode: Mode) -> f32:
    let h = s.x + m.pos
    for blk in m.blocks:
        h = block(blk, h, mode)
    return mse(linear(m.head, layer_norm(h, over=D)), s.y)

fn train_step(mut m: Transformer, mut opt: AdamW[Transformer], s: [b] Seq,
              mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, s, mode)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let ds = dataset(Seq, "seq.safetensors")
    let m = Transformer.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let out = jsonl("losses.jsonl")
    let k = 0
    for s in ds.take(B).batches(B):
        out.write(train_step(m, opt, s, Train(seed=k)))
    for s in progress(ds.batches(B)):
        k += 1
        out.write(train_step(m, opt, s, Train(seed=k)))
"""


def seq_inputs(folder, steps, batch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps * batch, 32, 128)).astype(np.float32)
    safetensors_io.write(os.path.join(folder, "seq.safetensors"),
                         {"x": x, "y": np.roll(x, 1, axis=1)})


def step_ms(ss, folder, program, devices, batch, deterministic):
    head = "devices cpu\n" + ("    deterministic\n" if deterministic else "")
    return 1000 * compare_ddp.step_seconds(
        ss, folder, head + program, ["--devices", devices, "-D", f"B={batch}"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", help="mlp or transformer: that program alone")
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    print(f"load average before: {' '.join(map(str, os.getloadavg()))}")
    print(f"{'program':>12} {'devices':>11} {'batch':>6} {'default ms':>11} "
          f"{'determ. ms':>11} {'ratio':>6}  (median of {args.repeats} pairs)")
    cases = [("mlp", MLP, 64, 200), ("mlp", MLP, 6144, 20),
             ("transformer", TRANSFORMER, 64, 40),
             ("transformer", TRANSFORMER, 512, 10)]
    cases = [c for c in cases if args.only in (None, c[0])]
    for name, program, batch, steps in cases:
        with tempfile.TemporaryDirectory() as folder:
            if name == "mlp":
                make_inputs(folder, steps, batch)
            else:
                seq_inputs(folder, steps, batch)
            for devices in ("cpu", "cpu[0 1 2]"):
                pairs, plain, det = [], [], []
                for k in range(args.repeats):
                    order = (False, True) if k % 2 == 0 else (True, False)
                    t = {d: step_ms(ss, folder, program, devices, batch, d)
                         for d in order}
                    plain.append(t[False])
                    det.append(t[True])
                    pairs.append(t[True] / t[False])
                print(f"{name:>12} {devices:>11} {batch:>6} "
                      f"{statistics.median(plain):11.2f} "
                      f"{statistics.median(det):11.2f} "
                      f"{statistics.median(pairs):6.3f}", flush=True)
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()
