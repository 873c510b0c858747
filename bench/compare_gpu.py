#!/usr/bin/python3
"""The README MLP on one GPU: ss on `cuda[0]` against torch on the same GPU.

The device check's timing part (scripts/gpu_check.sh, issue 31), run where
a GPU and a CUDA torch are (the lent machine). From the same init on the
same data as bench/compare_pytorch.py (its PROGRAM and make_inputs), it
trains the README MLP with AdamW in ss (`ss run --devices 'cuda[0]'`,
its steps recorded and, SHAPESCRIPT_RECORD_STEPS=0, not; a recorded run
that replayed nothing is an error, and the two give the same losses),
in torch eager and in torch with the whole step captured as a CUDA graph,
and prints per batch size (64 and 6144): each side's step time (ss from
progress()'s rate; torch from the wall clock around its loop, which reads
each step's loss as ss's log does), the step's products alone through
cuBLAS (torch.mm with TF32 off, timed with CUDA events: the floor), and
the largest relative difference between ss's and torch's loss
trajectories (f32 on both sides; different kernels, so about 1e-5 per
step, and the check is < 1e-3 as compare_pytorch's).

    python3 bench/compare_gpu.py --ss build/ss [--runs 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_pytorch as cp  # noqa: E402


def ss_loop(ss, folder, program, defines, record):
    """(losses, progress()'s (count, seconds)) of [program] on cuda[0],
    its steps recorded (Note [Recorded steps]) or each run as it comes."""
    args = [ss, "run", "--devices", os.environ.get("SS_GPU_DEVICES", "cuda[0]"),
            program]
    for k, v in defines.items():
        args += ["-D", f"{k}={v}"]
    env = dict(os.environ, SHAPESCRIPT_RECORD_STEPS="verbose" if record else "0")
    p = subprocess.run(args, cwd=folder, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"ss failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    m = re.search(r"(\d+) it in ([0-9.]+) s \(([0-9.]+) it/s\)", p.stderr)
    losses = [json.loads(line)["loss"]
              for line in open(os.path.join(folder, "losses.jsonl"))]
    count = int(m.group(1))
    replays = re.search(r"replayed (\d+) times", p.stderr)
    if record and not replays:
        raise RuntimeError(f"ss recorded no step:\n{p.stderr}")
    return losses, (count, count * cp.seconds_per_step(m))


def ss_gpu(ss, folder, batch, steps, record=True):
    """(losses, seconds per step) of the README MLP on cuda[0]: the loop of
    every step less the same loop stopped after a quarter of them, over
    the steps between, so the first steps' one-time costs (cuBLAS's
    handle, the allocator's first blocks) cancel."""
    text = cp.PROGRAM.replace("progress(ds.batches(B))",
                              "progress(ds.take(NT).batches(B))")
    text = re.sub(r"^(dim B = .*)$", r"\1\ndim NT = 2", text, flags=re.M)
    for name, src in (("mlp.ss", cp.PROGRAM), ("short.ss", text)):
        with open(os.path.join(folder, name), "w") as f:
            f.write(src)
    short = max(2, steps // 4)
    losses, (n1, t1) = ss_loop(ss, folder, "mlp.ss", {"B": batch}, record)
    _, (n0, t0) = ss_loop(ss, folder, "short.ss",
                          {"B": batch, "NT": short * batch}, record)
    return losses, (t1 - t0) / (n1 - n0)


def torch_gpu(img, label, w1, w2, batch, graphed):
    """(losses, seconds per step) of torch on the GPU, the data already
    there (the fastest torch can be fed), eager or the whole step as one
    CUDA graph (torch's documented whole-network capture)."""
    dev = torch.device("cuda")
    p1 = torch.nn.Parameter(torch.from_numpy(w1.copy()).to(dev))
    p2 = torch.nn.Parameter(torch.from_numpy(w2.copy()).to(dev))
    opt = torch.optim.AdamW([p1, p2], lr=1e-3, capturable=graphed)
    x_all = torch.from_numpy(img).to(dev)
    y_all = torch.from_numpy(label).to(dev)
    steps = len(img) // batch
    f = torch.nn.functional

    def step(x, y):
        loss = f.cross_entropy(torch.relu(x @ p1) @ p2, y)
        loss.backward()
        opt.step()
        return loss

    losses = []
    warm = max(2, steps // 4)  # untimed first steps, as ss_gpu's
    if not graphed:
        for s in range(steps):
            if s == warm:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = step(x_all[s * batch:(s + 1) * batch],
                        y_all[s * batch:(s + 1) * batch])
            losses.append(loss.item())
        return losses, (time.perf_counter() - t0) / (steps - warm)
    # Capture: warm up on a side stream (torch's recipe), then record.
    sx = x_all[:batch].clone()
    sy = y_all[:batch].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    p1_0, p2_0 = p1.detach().clone(), p2.detach().clone()
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            step(sx, sy)
    torch.cuda.current_stream().wait_stream(side)
    # The warm-up's steps moved the params: start again from the init.
    with torch.no_grad():
        p1.copy_(p1_0)
        p2.copy_(p2_0)
    for st in opt.state.values():
        for k in ("exp_avg", "exp_avg_sq"):
            st[k].zero_()
        st["step"].zero_()
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = step(sx, sy)
    for s in range(steps):
        if s == warm:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        sx.copy_(x_all[s * batch:(s + 1) * batch])
        sy.copy_(y_all[s * batch:(s + 1) * batch])
        graph.replay()
        losses.append(static_loss.item())
    return losses, (time.perf_counter() - t0) / (steps - warm)


def gemm_floor(batch, reps=200):
    """Seconds of the step's products alone (cp.mlp_gemms), cuBLAS in f32
    (TF32 off), median of [reps] timed with CUDA events."""
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    ops = []
    for (nb, M, N, K, ta, tb) in cp.mlp_gemms(batch):
        a = torch.randn((K, M) if ta else (M, K), device=dev)
        b = torch.randn((N, K) if tb else (K, N), device=dev)
        out = torch.empty((M, N), device=dev)
        ops.append((a.t() if ta else a, b.t() if tb else b, out))
    for _ in range(10):
        for a, b, out in ops:
            torch.mm(a, b, out=out)
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for a, b, out in ops:
            torch.mm(a, b, out=out)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    rows = []
    for batch, steps in ((64, 400), (6144, 20)):
        with tempfile.TemporaryDirectory() as folder:
            img, label, w1, w2 = cp.make_inputs(folder, steps, batch, seed=1)
            t = {"ss": [], "ss_eager": [], "eager": [], "graph": []}
            ls = lt = None
            for _ in range(args.runs):  # alternating runs
                try:
                    ls, s = ss_gpu(ss, folder, batch, steps)
                    t["ss"].append(s)
                except RuntimeError as e:
                    print(e)
                try:
                    le, s = ss_gpu(ss, folder, batch, steps, record=False)
                    t["ss_eager"].append(s)
                    if ls and le != ls:
                        print("recorded and eager ss losses differ")
                except RuntimeError as e:
                    print(e)
                lt, s = torch_gpu(img, label, w1, w2, batch, graphed=False)
                t["eager"].append(s)
                try:
                    _, s = torch_gpu(img, label, w1, w2, batch, graphed=True)
                    t["graph"].append(s)
                except Exception as e:  # noqa: BLE001 (report, go on)
                    print(f"torch's graphed step failed: {e}")
            floor = gemm_floor(batch)
            med = {k: statistics.median(v) if v else float("nan")
                   for k, v in t.items()}
            rel = (max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ls, lt))
                   if ls else float("nan"))
            rows.append((batch, med, floor, rel))
    print("| batch | ss cuda[0] ms (recorded) | ss not recorded ms | "
          "torch eager ms | torch graph ms | "
          "cuBLAS floor ms | ss/eager | ss/floor | loss rel diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for batch, med, floor, rel in rows:
        print(f"| {batch} | {med['ss'] * 1e3:.4f} | "
              f"{med['ss_eager'] * 1e3:.4f} | {med['eager'] * 1e3:.4f} | "
              f"{med['graph'] * 1e3:.4f} | {floor * 1e3:.4f} | "
              f"{med['ss'] / med['eager']:.3f} | {med['ss'] / floor:.2f} | "
              f"{rel:.1e} |")


if __name__ == "__main__":
    main()
