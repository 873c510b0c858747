#!/usr/bin/python3
"""Causal self-attention, forward and backward, with einsum and with `@`.

The same ShapeScript program twice: once with the attention's two products
written as einsums (the spec's README example), once with `@` and a
rearrange for kᵀ. Each is run by `ss run` for a number of value_and_grad
steps; the two are timed alternately, several rounds, on one core
(OPENBLAS_NUM_THREADS=1), and the script prints the median step time of each
and their ratio (issue 15's target: einsum <= 1.1x `@`), by the wall time
progress() reports and by CPU time (a run's less a run of one step).
Medians of alternating runs, because the machine is shared: a burst of
someone else's build slows one round of both, not one variant.

It reports; it does not judge (benchmarks report, tests assert): it exits
non-zero only when `ss` fails. Not run by CI.

    /usr/bin/python3 bench/einsum_attention.py [--ss build/ss] [--rounds 5]
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

PROGRAM = """
dim D = {D}
dim H = {H}
dim Dh = {Dh}
dim B = {B}
dim N = {N}
dim S = {S}

model Attn:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)

fn attention(m: Attn, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
{products}
    return rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o

fn loss(m: Attn, x: [b n D]) -> f32:
    return mean(attention(m, x))

fn main():
    let m = Attn.init(seed=0)
    let x = randn([B, N, D], seed=1)
    for i in progress(range(S)):
        let l, g = value_and_grad(loss, m, x)
"""

# The two spellings of the same products (softmax and mask shared).
EINSUM = """\
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)"""
MATMUL = """\
    let s = q @ rearrange(k, b H t Dh -> b H Dh t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = p @ v"""

SIZES = [
    dict(B=16, N=64, D=128, H=4, S=40),
    dict(B=8, N=256, D=512, H=8, S=6),
]


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(ss, folder, name, steps):
    """(wall s/step from progress(), CPU s/step): the CPU time of a run of
    [steps] less that of a run of one (the check, the init and a first
    step), over [steps] - 1. On a shared machine the CPU time moves less
    than the wall."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cpu = []
    for s in (1, steps):
        t0 = children_cpu()
        p = subprocess.run([ss, "run", name, "-D", f"S={s}"], cwd=folder,
                           env=env, capture_output=True, text=True)
        cpu.append(children_cpu() - t0)
        if p.returncode != 0:
            sys.exit(f"ss failed on {name}:\n{p.stdout}\n{p.stderr}")
    # progress() prints "N it in T s (R it/s)" when stderr is not a tty.
    m = re.search(r"(\d+) it in ([0-9.]+) s", p.stderr)
    return float(m.group(2)) / int(m.group(1)), (cpu[1] - cpu[0]) / (steps - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default=os.path.join(os.path.dirname(__file__),
                                                 "..", "build", "ss"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    with tempfile.TemporaryDirectory() as folder:
        for sizes in SIZES:
            s = dict(sizes, Dh=sizes["D"] // sizes["H"])
            for name, products in (("einsum.ss", EINSUM), ("matmul.ss", MATMUL)):
                with open(os.path.join(folder, name), "w") as f:
                    f.write(PROGRAM.format(products=products, **s))
            wall = {"einsum.ss": [], "matmul.ss": []}
            cpu = {"einsum.ss": [], "matmul.ss": []}
            for _ in range(args.rounds):
                for name in wall:
                    w, c = run(ss, folder, name, s["S"])
                    wall[name].append(w)
                    cpu[name].append(c)
            print(f"B={s['B']} N={s['N']} D={s['D']} H={s['H']} "
                  f"(medians of {args.rounds} alternating runs, {s['S']} "
                  f"steps each):")
            for what, t in (("wall", wall), ("cpu", cpu)):
                te = statistics.median(t["einsum.ss"])
                tm = statistics.median(t["matmul.ss"])
                print(f"  {what:4s}: einsum {te * 1e3:7.2f} ms/step, "
                      f"@ {tm * 1e3:7.2f} ms/step, ratio {te / tm:.3f}")

if __name__ == "__main__":
    main()
