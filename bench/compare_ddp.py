#!/usr/bin/python3
"""The README MLP's train step on cpu[0 1] and cpu[0 1 2] against PyTorch DDP
on Gloo, side by side (devices.md: target ss <= 0.7x DDP's step time).

Both train the README MLP with AdamW on the same synthetic data at batch 64
and 6144, on N processes over Gloo on loopback, one BLAS thread each. Each
side first takes one untimed step (ss: starting the workers and sending
them the dataset; DDP: its buckets), then times the rest: ss's step time
comes from progress()'s summary (the loop alone), DDP's from a timer around
its loop on rank 0. Each configuration runs --repeats times, alternating
ss and DDP; the medians are compared. Needs Debian's python3-torch
(/usr/bin/python3); not part of CI:
    /usr/bin/python3 bench/compare_ddp.py [--ss build/ss] [--repeats 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(__file__))
from compare_pytorch import PROGRAM, make_inputs, mlp_gemms, seconds_per_step  # noqa: E402,E501
import sgemm_floor  # noqa: E402

# The timed loop after one untimed step on the first batch.
WARM_PROGRAM = PROGRAM.replace(
    "    for batch in progress(ds.batches(B)):",
    "    for batch in ds.take(B).batches(B):\n"
    "        out.write(train_step(m, opt, batch))\n"
    "    for batch in progress(ds.batches(B)):")
assert WARM_PROGRAM != PROGRAM


def ddp_worker(rank, world, folder, batch, port, result):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    # One thread for torch and its OpenBLAS (torch.set_num_threads leaves
    # OpenBLAS at every core), with the packing buffers on huge pages as in
    # ss's workers (sgemm_floor.set_torch_threads).
    sgemm_floor.set_torch_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    data = np.load(os.path.join(folder, "data.npz"))
    img, label = torch.from_numpy(data["img"]), torch.from_numpy(data["label"])
    w = np.load(os.path.join(folder, "init.npz"))
    model = torch.nn.Sequential(torch.nn.Linear(784, 256, bias=False),
                                torch.nn.ReLU(),
                                torch.nn.Linear(256, 10, bias=False))
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(w["w1"].T))
        model[2].weight.copy_(torch.from_numpy(w["w2"].T))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    steps = len(img) // batch
    per = batch // world

    def step(s):
        lo = s * batch + rank * per
        x, y = img[lo:lo + per], label[lo:lo + per]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()

    step(0)  # untimed, as ss's first step
    dist.barrier()
    t0 = time.perf_counter()
    for s in range(steps):
        step(s)
    dist.barrier()
    if rank == 0:
        result.put((time.perf_counter() - t0) / steps)
    dist.destroy_process_group()


def run_ddp(folder, world, batch):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = 29500 + os.getpid() % 1000
    procs = [ctx.Process(target=ddp_worker,
                         args=(r, world, folder, batch, port, q))
             for r in range(world)]
    for p in procs:
        p.start()
    t = q.get()
    for p in procs:
        p.join()
    return t


def step_seconds(ss, folder, program, args, env=None):
    """Seconds a step of [program] takes, written to [folder]/mlp.ss and
    run by `ss run mlp.ss ARGS` (with [env] added to the environment): its
    progress() summary (the loop alone)."""
    with open(os.path.join(folder, "mlp.ss"), "w") as f:
        f.write(program)
    p = subprocess.run([ss, "run", "mlp.ss"] + list(args), cwd=folder,
                       capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    if p.returncode != 0:
        sys.exit(f"ss failed:\n{p.stdout}\n{p.stderr}")
    m = re.search(r"(\d+) it in ([0-9.]+) s \(([0-9.]+) it/s\)",
                  p.stderr + p.stdout)
    return seconds_per_step(m)


def run_ss(ss, folder, world, batch, program=WARM_PROGRAM, env=None):
    """Seconds a step of [program] takes on cpu[0 .. world-1]."""
    devices = "cpu[" + " ".join(str(i) for i in range(world)) + "]"
    return step_seconds(ss, folder, program,
                        ["--devices", devices, "-D", f"B={batch}"], env)


# The workers' gradient exchange over the sockets instead of shared memory
# (Note [Direct exchange in shared memory] in dist/comm/shm_exchange.cpp):
# the "sockets" column, what ss did before it.
SOCKETS = {"SHAPESCRIPT_DIRECT_EXCHANGE": "tcp"}


# Issue 29's goals, ss's step over DDP's on three processes.
GOALS = {(3, 64): 0.4, (3, 6144): 0.95}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default=os.path.join(os.path.dirname(__file__),
                                                 "..", "build", "ss"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    print(f"torch {torch.__version__}; Gloo on loopback; 1 BLAS thread per "
          f"process; {os.cpu_count()} cores")
    print(f"{'devices':>8} {'batch':>6} {'ss ms':>9} {'sockets':>9}"
          f" {'DDP ms':>9} {'ratio':>7} {'peak':>7}  goal (issue 29, "
          "cpu[0 1 2]), load average")
    print("(sockets: ss with its gradient exchange over TCP, as before "
          "the shared-memory exchange; ratio: ss over DDP)")
    print("(peak: the whole batch's products at the machine's FMA peak on "
          "min(devices, cores) threads, over DDP's step: the least ratio "
          "any implementation reaches here)")
    for world in (2, 3):
        for batch, steps in ((64, 200), (6144, 10)):
            with tempfile.TemporaryDirectory() as folder:
                img, label, w1, w2 = make_inputs(folder, steps, batch, seed=1)
                np.savez(os.path.join(folder, "data.npz"), img=img,
                         label=label)
                np.savez(os.path.join(folder, "init.npz"), w1=w1, w2=w2)
                ts, tk, td = [], [], []
                for _ in range(args.repeats):
                    ts.append(run_ss(ss, folder, world, batch))
                    tk.append(run_ss(ss, folder, world, batch, env=SOCKETS))
                    td.append(run_ddp(folder, world, batch))
                t_ss, t_ddp = statistics.median(ts), statistics.median(td)
                t_sockets = statistics.median(tk)
                peak = sgemm_floor.peak_floor(
                    mlp_gemms(batch), min(world, os.cpu_count()))
                peak = "" if peak is None else f" {peak / t_ddp:7.3f}"
                goal = GOALS.get((world, batch))
                verdict = "" if goal is None else (
                    f"  <= {goal}: "
                    + ("meets" if t_ss / t_ddp <= goal else "misses"))
                print(f"{world:>8} {batch:>6} {t_ss * 1e3:9.3f} "
                      f"{t_sockets * 1e3:9.3f} {t_ddp * 1e3:9.3f} "
                      f"{t_ss / t_ddp:7.3f}{peak}{verdict}"
                      f"  load {os.getloadavg()[0]:.1f} on "
                      f"{os.cpu_count()} cores")


if __name__ == "__main__":
    main()
