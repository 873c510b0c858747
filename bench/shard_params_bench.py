#!/usr/bin/python3
"""`shard params` against data parallel on cpu[0 1 2] (devices.md item 9;
issue 12's figures), through `ss run`'s controller and `ss worker`s:

  memory: a model of three [3072 3072] f32 params trained with AdamW; each
    worker's peak RSS (VmHWM, read from /proc while the run goes on) with
    `shard params` against without. Target: at most 0.6x. And data
    parallel's own: a worker's peak above the process's baseline (the same
    program with N = 8) against its params, gradients, AdamW state and
    activations. Target: at most 1.3x. The run ends with a save of the
    model and its optimizer (432 MiB), which streams (Note [A streaming
    save]) and so adds nothing to a worker's peak. Beside each peak, the
    most the worker's tensors held at once (SS_MEMORY_REPORT), so the rest
    is accounted: the heap, big blocks kept for reuse, Gloo's buffers.
  speed: the README MLP's step (compare_ddp.py's program and data: the
    loop timed by progress() after one untimed step), `shard params`
    against data parallel, at batch 64 and 6144, alternating. Target: at
    most 1.5x.

Benchmarks report, tests assert: nothing here fails a build. Run:
    /usr/bin/python3 bench/shard_params_bench.py [--ss build/ss] [--repeats 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ddp  # noqa: E402
from compare_pytorch import make_inputs  # noqa: E402

MEMORY_PROGRAM = """devices cpu
{options}
dim N = 3072
dim B = 48

model Big:
    a: [N N] = normal(std=1/sqrt(N))
    b: [N N] = normal(std=1/sqrt(N))
    c: [N N] = normal(std=1/sqrt(N))

fn loss(m: Big, x: [b N]) -> f32:
    return mean(tanh(tanh(x @ m.a) @ m.b) @ m.c)

fn step(mut m: Big, mut opt: AdamW[Big], x: [b N]) -> f32:
    let l, g = value_and_grad(loss, m, x)
    update(m, opt, g)
    return l

fn main():
    let m = Big.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    let x = randn([B N], seed=1)
    for i in range(4):
        print(step(m, opt, x))
    save("bench.safetensors", m, opt)
"""



# Data parallel's bytes a worker must hold: the params, their gradients and
# AdamW's two states (4 x 3 x N x N f32), and the activations the backward
# pass keeps: x and the five [b N] values after it, b = B / world rows.
def needed_bytes(world, n=3072, batch=48):
    return 4 * 3 * n * n * 4 + 6 * (batch // world) * n * 4


def source(template, shard, **kw):
    return template.format(options="    shard params\n" if shard else "", **kw)


STORAGE_PEAK = re.compile(r"storage live [\d.]+ MiB peak ([\d.]+) MiB")


def peak_rss_of_workers(ss, folder, src, devices):
    """Runs [src]; the peak RSS (MiB) of each `ss worker` it started, and
    the most its tensors held at once (SS_MEMORY_REPORT's storage peak,
    Note [Counting storage bytes]), MiB."""
    path = os.path.join(folder, "bench.ss")
    with open(path, "w") as f:
        f.write(src)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", SS_MEMORY_REPORT="1")
    p = subprocess.Popen([ss, "run", "--devices", devices, path], cwd=folder,
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    peaks = {}
    while p.poll() is None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/status") as f:
                    status = f.read()
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            ppid = int(re.search(r"PPid:\s+(\d+)", status).group(1))
            hwm = re.search(r"VmHWM:\s+(\d+) kB", status)
            if ppid == p.pid and b"worker" in cmd and hwm:
                peaks[pid] = max(peaks.get(pid, 0), int(hwm.group(1)) / 1024)
        time.sleep(0.02)
    out, err = p.communicate()
    if p.returncode != 0:
        sys.exit(f"ss run failed ({p.returncode}):\n{out}\n{err}")
    storage = max((float(x) for x in STORAGE_PEAK.findall(err)), default=0)
    return sorted(peaks.values()), storage


def step_ms(ss, folder, world, batch, shard):
    """The README MLP's step (compare_ddp.py's program and data), ms."""
    program = "devices cpu\n" + ("    shard params\n" if shard else "")
    return 1000 * compare_ddp.run_ss(ss, folder, world, batch,
                                     program + compare_ddp.WARM_PROGRAM)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--devices", default="cpu[0 1 2]")
    ap.add_argument("--only", choices=["memory", "speed"])
    args = ap.parse_args()
    # Others' builds share the machine: the figures are medians, and the
    # load they ran under is part of the report.
    print(f"load average before: {' '.join(map(str, os.getloadavg()))}")
    ss = os.path.abspath(args.ss)
    with tempfile.TemporaryDirectory() as folder:
        world = args.devices.count(" ") + 1
        if args.only != "speed":
            # Alternating: data parallel, shard params, the baseline (the
            # same program with N = 8), so a change in the machine's load
            # falls on all three.
            runs = {"dp": [], "shard": [], "base": []}
            storage = {"dp": [], "shard": []}
            programs = {
                "dp": source(MEMORY_PROGRAM, False),
                "shard": source(MEMORY_PROGRAM, True),
                "base": source(MEMORY_PROGRAM, False).replace(
                    "dim N = 3072", "dim N = 8")}
            for _ in range(args.repeats):
                for k, src in programs.items():
                    rss, held = peak_rss_of_workers(ss, folder, src,
                                                    args.devices)
                    runs[k].append(max(rss))
                    if k in storage:
                        storage[k].append(held)
            peak = {k: statistics.median(v) for k, v in runs.items()}
            held = {k: statistics.median(v) for k, v in storage.items()}
            base = peak["base"]
            need = needed_bytes(world) / 2**20
            print(f"memory, three [3072 3072] f32 params with AdamW on "
                  f"{args.devices}, a worker's peak RSS (medians of "
                  f"{args.repeats}; runs {runs}):")
            print(f"  shard params / data parallel: {peak['shard']:.0f} / "
                  f"{peak['dp']:.0f} MiB = "
                  f"{peak['shard'] / peak['dp']:.2f}x (target <= 0.6x)")
            print(f"  data parallel above the baseline ({base:.0f} MiB): "
                  f"{peak['dp'] - base:.0f} MiB for {need:.0f} MiB of "
                  f"params, gradients, AdamW state and activations = "
                  f"{(peak['dp'] - base) / need:.2f}x (target <= 1.3x)")
            for k in ("dp", "shard"):
                print(f"  {k}: tensors at most {held[k]:.0f} MiB at once; "
                      f"the rest of the peak above the baseline, "
                      f"{peak[k] - base - held[k]:.0f} MiB: the heap's free "
                      f"blocks, freed big blocks kept for reuse, the "
                      f"communicator's buffers")
        if args.only != "memory":
            for batch, steps in ((64, 200), (6144, 20)):
                make_inputs(folder, steps, batch)
                ms = {False: [], True: []}
                for _ in range(args.repeats):  # alternating the two
                    for shard in (False, True):
                        ms[shard].append(
                            step_ms(ss, folder, world, batch, shard))
                ms = {k: statistics.median(v) for k, v in ms.items()}
                print(f"speed, README MLP step at batch {batch} on "
                      f"{args.devices}: {ms[False]:.2f} ms data parallel, "
                      f"{ms[True]:.2f} ms shard params: "
                      f"{ms[True] / ms[False]:.2f}x (target <= 1.5x)")
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()
