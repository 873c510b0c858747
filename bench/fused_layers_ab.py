#!/usr/bin/python3
"""The README MLP's step with its layers fused and op by op.

The checker runs `relu(x @ m.w1)` as one product with its epilogue (Note
[Layers run as one product] in interp/check/fusion_layers.cpp);
SHAPESCRIPT_FUSE_LAYERS=0 leaves it as written (docs/trust.md). This runs
the same program on the same data both ways, alternating which goes first
in each pair, and prints each side's median wall time per step (from
progress(), as bench/compare_pytorch.py reads it), the median of the
pairs' ratios (fused / op by op), and the load average before each pair.
A benchmark reports; it asserts nothing.

    bench/fused_layers_ab.py [--pairs 7] [--threads 1]
"""
import argparse
import os
import statistics
import tempfile

import compare_pytorch as cp


def step_wall(ss, folder, batch, threads, fuse):
    env_before = os.environ.get("SHAPESCRIPT_FUSE_LAYERS")
    os.environ["SHAPESCRIPT_FUSE_LAYERS"] = "1" if fuse else "0"
    try:
        losses, wall = cp.ss_train(ss, folder, "mlp.ss", {"B": batch}, threads)
    finally:
        if env_before is None:
            del os.environ["SHAPESCRIPT_FUSE_LAYERS"]
        else:
            os.environ["SHAPESCRIPT_FUSE_LAYERS"] = env_before
    return losses, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default=os.path.join(os.path.dirname(__file__),
                                                 "..", "build", "ss"))
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    for batch, steps in ((64, 600), (6144, 16)):
        with tempfile.TemporaryDirectory() as folder:
            cp.make_inputs(folder, steps, batch, seed=1)
            with open(os.path.join(folder, "mlp.ss"), "w") as f:
                f.write(cp.PROGRAM)
            fused, plain, ratios, loads = [], [], [], []
            diff = 0.0
            for k in range(args.pairs):
                loads.append(os.getloadavg()[0])
                order = (True, False) if k % 2 == 0 else (False, True)
                got = {}
                for fuse in order:
                    got[fuse] = step_wall(ss, folder, batch, args.threads, fuse)
                fused.append(got[True][1])
                plain.append(got[False][1])
                ratios.append(got[True][1] / got[False][1])
                diff = max(diff, max(abs(a - b) / max(abs(b), 1e-12)
                                     for a, b in zip(got[True][0],
                                                     got[False][0])))
            print(f"batch {batch:5d}, {args.threads} thread(s), {steps} steps, "
                  f"{args.pairs} pairs: fused "
                  f"{statistics.median(fused) * 1e3:.3f} ms/step, op by op "
                  f"{statistics.median(plain) * 1e3:.3f} ms/step, median pair "
                  f"ratio {statistics.median(ratios):.3f} (range "
                  f"{min(ratios):.3f}-{max(ratios):.3f}); largest relative "
                  f"loss difference {diff:.1e}; load "
                  f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} "
                  f"cores", flush=True)


if __name__ == "__main__":
    main()
