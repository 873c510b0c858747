#!/usr/bin/python3
"""The README MLP in ShapeScript and in PyTorch, side by side.

Trains the README's MLP for 200 AdamW steps (batch 64) from the same
safetensors init on the same data in both, and prints the largest relative
difference between the two loss trajectories (must be < 1e-3); then times a
train step at batch 64 and 6144 in both with the same thread count and
prints the ratio (target: ss <= 0.8x PyTorch).

Needs Debian's python3-torch (run with /usr/bin/python3; not needed by CI):
    /usr/bin/python3 bench/compare_pytorch.py [--ss build/ss] [--threads 2]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

# The safetensors writer the torch program tests use (python3-safetensors
# is not in Debian 12).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "torch"))
import safetensors_io  # noqa: E402

D, H, C = 784, 256, 10

PROGRAM = """
dim D = 784
dim Hd = 256
dim C = 10
dim B = 64

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn main():
    let ds = dataset(Digit, "data.safetensors")
    let m = load("init.safetensors", Mlp)
    let opt = adamw(m, lr=1e-3)
    let out = jsonl("losses.jsonl")
    for batch in progress(ds.batches(B)):
        out.write(train_step(m, opt, batch))
"""


def make_inputs(folder, steps, batch, seed=0):
    rng = np.random.default_rng(seed)
    n = steps * batch
    img = rng.random((n, D), dtype=np.float32)
    # Learnable labels (a fixed random projection's argmax), so the loss
    # trajectory moves and the comparison means something.
    proj = rng.standard_normal((D, C)).astype(np.float32)
    label = np.argmax((img - 0.5) @ proj, axis=1).astype(np.int64)
    w1 = (rng.standard_normal((D, H)) / np.sqrt(D)).astype(np.float32)
    w2 = (rng.standard_normal((H, C)) / np.sqrt(H)).astype(np.float32)
    safetensors_io.write(os.path.join(folder, "data.safetensors"),
                         {"img": img, "label": label})
    safetensors_io.write(os.path.join(folder, "init.safetensors"),
                         {"w1": w1, "w2": w2})
    return img, label, w1, w2


def ss_train(ss, folder, program, defines, threads):
    """Runs [program] (a file in [folder] that writes each step's loss to
    losses.jsonl, looping over progress(...)) with `-D k=v` for [defines]:
    (losses, seconds per step)."""
    args = [ss, "run", program]
    for k, v in defines.items():
        args += ["-D", f"{k}={v}"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    p = subprocess.run(args, cwd=folder, env=env, capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"ss failed:\n{p.stdout}\n{p.stderr}")
    # progress() prints "N it in T s (R it/s), loss L" when not on a tty.
    m = re.search(r"(\d+) it in ([0-9.]+) s", p.stderr)
    losses = [json.loads(line)["loss"]
              for line in open(os.path.join(folder, "losses.jsonl"))]
    return losses, float(m.group(2)) / int(m.group(1))


def run_ss(ss, folder, batch, threads):
    with open(os.path.join(folder, "mlp.ss"), "w") as f:
        f.write(PROGRAM)
    return ss_train(ss, folder, "mlp.ss", {"B": batch}, threads)


def run_torch(img, label, w1, w2, batch, threads):
    torch.set_num_threads(threads)
    p1 = torch.nn.Parameter(torch.from_numpy(w1.copy()))
    p2 = torch.nn.Parameter(torch.from_numpy(w2.copy()))
    opt = torch.optim.AdamW([p1, p2], lr=1e-3)  # torch's defaults
    x_all, y_all = torch.from_numpy(img), torch.from_numpy(label)
    losses, t0 = [], time.perf_counter()
    for s in range(len(img) // batch):
        x, y = x_all[s * batch:(s + 1) * batch], y_all[s * batch:(s + 1) * batch]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ p1) @ p2, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, (time.perf_counter() - t0) / (len(img) // batch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default=os.path.join(os.path.dirname(__file__),
                                                 "..", "build", "ss"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    print(f"torch {torch.__version__}, {args.threads} thread(s) each")
    with tempfile.TemporaryDirectory() as folder:
        img, label, w1, w2 = make_inputs(folder, 200, 64)
        ls, _ = run_ss(ss, folder, 64, args.threads)
        lt, _ = run_torch(img, label, w1, w2, 64, args.threads)
        rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ls, lt))
        print(f"200 AdamW steps at batch 64: loss {ls[0]:.4f} -> {ls[-1]:.4f} "
              f"(torch {lt[0]:.4f} -> {lt[-1]:.4f})")
        print(f"largest relative loss difference: {rel:.2e} "
              f"({'ok' if rel < 1e-3 else 'FAILS'} < 1e-3)")
    for batch, steps in ((64, 300), (6144, 12)):
        with tempfile.TemporaryDirectory() as folder:
            img, label, w1, w2 = make_inputs(folder, steps, batch, seed=1)
            _, t_ss = run_ss(ss, folder, batch, args.threads)
            _, t_torch = run_torch(img, label, w1, w2, batch, args.threads)
            print(f"batch {batch:5d}: ss {t_ss * 1e3:8.3f} ms/step, torch "
                  f"{t_torch * 1e3:8.3f} ms/step, ratio {t_ss / t_torch:.3f}")


if __name__ == "__main__":
    main()
