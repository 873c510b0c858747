#!/usr/bin/python3
"""One training step from Python against `ss run` (issue 27's figure): the
README MLP (examples/readme_mlp.ss) on one device, its steps at batch 64
and 6144 called from a Python loop (`prog.train_step(m, opt, batch)` over
`train.batches(B)`) and, as the baseline, from ShapeScript's own loop in
`ss run` (bench/python_step.ss, timed by progress()). Each side warms up
with one untimed pass over B examples, then times --epochs epochs (54,000
examples each). The two alternate, --repeats times, each going first in
turn; medians, the median of each pair's ratio, and the ratio of the least
times. Target: at most 1.05x.

Benchmarks report, tests assert: nothing here fails a build. Run:
    /usr/bin/python3 bench/python_bench.py [--build build] [--repeats 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

PYTHON_SIDE = r"""
import sys, time
import shapescript as ss
prog = ss.load(sys.argv[1])
B = int(sys.argv[2])
E = int(sys.argv[3])
train, test = ss.synthetic_digits(prog.Digit, 60000, seed=0).split(0.9)
m = prog.Mlp.init(seed=0)
opt = ss.adamw(m, lr=1e-3)
for batch in train.take(B).batches(B):
    prog.train_step(m, opt, batch)
for e in range(E):
    t0 = time.perf_counter()
    n = 0
    for batch in train.batches(B):
        prog.train_step(m, opt, batch)
        n += 1
    s = time.perf_counter() - t0
    print(f"{n} it in {s:.4f} s ({n / s:.4f} it/s)")
"""


def ms_per_step(text):
    """Every epoch's line (`N it in S s (R it/s)`: progress() prints S to
    10 ms and R to 0.1, so R is the precise one): ms per step over all."""
    steps = seconds = 0.0
    for n, rate in re.findall(r"(\d+) it in [0-9.]+ s \(([0-9.]+) it/s\)",
                              text):
        steps += int(n)
        seconds += int(n) / float(rate)
    return 1000 * seconds / steps


def run_ss(build, batch, epochs):
    p = subprocess.run([os.path.join(build, "ss"), "run",
                        os.path.join(HERE, "python_step.ss"), "--entry",
                        "bench", "-D", f"B={batch}", "-D", f"E={epochs}"],
                       capture_output=True, text=True, check=True)
    return ms_per_step(p.stderr + p.stdout)


def run_python(build, batch, epochs):
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    p = subprocess.run([sys.executable, "-c", PYTHON_SIDE,
                        os.path.join(HERE, "..", "examples", "readme_mlp.ss"),
                        str(batch), str(epochs)], env=env, capture_output=True, text=True,
                       check=True)
    return ms_per_step(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 6144])
    ap.add_argument("--epochs", type=int, default=2,
                    help="timed epochs (54,000 examples each) per run")
    args = ap.parse_args()
    print(f"load average before: {' '.join(map(str, os.getloadavg()))}")
    for batch in args.batches:
        ss_ms, py_ms = [], []
        for i in range(args.repeats):
            # Alternating which goes first, so a drift in the machine's
            # speed weighs on both alike; each pair's ratio is taken.
            sides = [(ss_ms, run_ss), (py_ms, run_python)]
            for out, run in sides if i % 2 == 0 else reversed(sides):
                out.append(run(args.build, batch, args.epochs))
        s, p = statistics.median(ss_ms), statistics.median(py_ms)
        pairs = [b / a for a, b in zip(ss_ms, py_ms)]
        print(f"batch {batch:5d}: ss run {s:8.3f} ms/step, Python "
              f"{p:8.3f} ms/step; Python/ss per pair: median "
              f"{statistics.median(pairs):.3f}x, least "
              f"{min(py_ms) / min(ss_ms):.3f}x  "
              f"(ss {' '.join(f'{x:.3f}' for x in ss_ms)}; "
              f"py {' '.join(f'{x:.3f}' for x in py_ms)})")
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()
