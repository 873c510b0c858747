#!/usr/bin/python3
"""The host's share of a step, recorded and not, on the stand-in GPU.

A recorded step (Note [Recorded steps] in interp/devices/recorded_calls.cpp)
skips the walk: a replay is its guards, the batch's copies into the
recorded buffers, the optimizer's patches and one launch. On the stand-in
GPU (tests/stand_in_gpu/, the CUDA module's twin over the CPU backend) a
tiny regression net's step computes almost nothing, so what a step costs
there is the host's work: the walk of forward, backward and update when
not recorded (SHAPESCRIPT_RECORD_STEPS=0), a replay when recorded. Each
figure is (time of 3002 steps - time of 2) / 3000, the median of
alternating runs, with the load average printed: these machines are
noisy. A GPU's own figures are bench/compare_gpu.py's, on the lent GPU.

    python3 bench/recorded_steps_bench.py [--ss build/ss] [--runs 5]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

PROGRAM = """devices cuda[0]

dim D = 8
dim H = 16

model Net:
    w1: [D H] = normal(std=0.3)
    w2: [H] = normal(std=0.3)

fn loss(m: Net, x: [b D], y: [b]) -> f32:
    return mse(tanh(x @ m.w1) @ m.w2, y)

fn step(mut m: Net, mut opt: AdamW[Net], x: [b D], y: [b]) -> f32:
    let l, g = value_and_grad(loss, m, x, y)
    update(m, opt, g)
    return l

fn main():
    let m = Net.init(seed=0)
    let opt = adamw(m, lr=0.01)
    let x = randn([16 D], seed=1)
    let y = sum(x * x, over=D)
    let last = step(m, opt, x, y)
    for i in range(N):
        last = step(m, opt, x, y)
    print(last)
"""


def timed(ss, folder, n, record):
    env = dict(os.environ, SHAPESCRIPT_RECORD_STEPS="1" if record else "0",
               SS_CUDA_MODULE=os.path.join(os.path.dirname(ss),
                                           "libss_stand_in_gpu.so"))
    t = time.perf_counter()
    subprocess.run([ss, "run", "p.ss", "-D", f"N={n}"], cwd=folder, env=env,
                   check=True, capture_output=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    print("load average:", os.getloadavg())
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "p.ss"), "w") as f:
            f.write(PROGRAM.replace("dim H = 16", "dim H = 16\ndim N = 1"))
        per = {False: [], True: []}
        for _ in range(args.runs):  # alternating runs
            for record in (False, True):
                long = timed(ss, folder, 3001, record)
                short = timed(ss, folder, 1, record)
                per[record].append((long - short) / 3000)
    eager, rec = statistics.median(per[False]), statistics.median(per[True])
    print("| step on the stand-in GPU | host µs a step |")
    print("|---|---|")
    print(f"| walked (SHAPESCRIPT_RECORD_STEPS=0) | {eager * 1e6:.1f} |")
    print(f"| replayed | {rec * 1e6:.1f} |")
    print(f"| replayed / walked | {rec / eager:.2f} |")
    print("load average:", os.getloadavg())


if __name__ == "__main__":
    main()
