#!/usr/bin/python3
"""One training step from Python against `ss run` (issue 27's figure): the
README MLP (examples/readme_mlp.ss) on one device, its steps at batch 64
and 6144 called from a Python loop (`prog.train_step(m, opt, batch)` over
`train.batches(B)`) and, as the baseline, from ShapeScript's own loop in
`ss run` (bench/python_step.ss, timed by progress()). Each side warms up
with one untimed pass over B examples, then times one epoch (54,000
examples). The two alternate, --repeats times; medians, and the ratio of
the least times. Target: at most 1.05x.

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
train, test = ss.synthetic_digits(prog.Digit, 60000, seed=0).split(0.9)
m = prog.Mlp.init(seed=0)
opt = ss.adamw(m, lr=1e-3)
for batch in train.take(B).batches(B):
    prog.train_step(m, opt, batch)
t0 = time.perf_counter()
n = 0
for batch in train.batches(B):
    prog.train_step(m, opt, batch)
    n += 1
print(f"{n} it in {time.perf_counter() - t0:.4f} s")
"""


def ms_per_step(text):
    m = re.search(r"(\d+) it in ([0-9.]+) s", text)
    return 1000 * float(m.group(2)) / int(m.group(1))


def run_ss(build, batch):
    p = subprocess.run([os.path.join(build, "ss"), "run",
                        os.path.join(HERE, "python_step.ss"), "--entry",
                        "bench", "-D", f"B={batch}"],
                       capture_output=True, text=True, check=True)
    return ms_per_step(p.stderr + p.stdout)


def run_python(build, batch):
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    p = subprocess.run([sys.executable, "-c", PYTHON_SIDE,
                        os.path.join(HERE, "..", "examples", "readme_mlp.ss"),
                        str(batch)], env=env, capture_output=True, text=True,
                       check=True)
    return ms_per_step(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"load average before: {' '.join(map(str, os.getloadavg()))}")
    for batch in (64, 6144):
        ss_ms, py_ms = [], []
        for _ in range(args.repeats):
            ss_ms.append(run_ss(args.build, batch))
            py_ms.append(run_python(args.build, batch))
        s, p = statistics.median(ss_ms), statistics.median(py_ms)
        # And the ratio of the least times: the steady cost on a noisy
        # machine.
        print(f"batch {batch:5d}: ss run {s:8.3f} ms/step, Python "
              f"{p:8.3f} ms/step, {p / s:.3f}x, least "
              f"{min(py_ms) / min(ss_ms):.3f}x  "
              f"(ss {' '.join(f'{x:.3f}' for x in ss_ms)}; "
              f"py {' '.join(f'{x:.3f}' for x in py_ms)})")
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()
