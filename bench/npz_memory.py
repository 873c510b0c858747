#!/usr/bin/python3
"""The peak memory of `ss run` iterating a streamed 512 MiB npz, stored
(np.savez) and compressed (np.savez_compressed), against the data's size
(issue 32 item 11; Note [Reading an npz in place] in
interp/data/loaders_npz.cpp).

It writes the files in /tmp (x: [n 256] f32 of bytes 0..255 over 255, y:
[n] i64; kept for a rerun), runs `ss run` on a program that iterates
`dataset(Big, file, stream=true)` in batches of 1024, and prints each
run's peak RSS, read from `/usr/bin/time -v` (the ss process's own: time
is a small process, so the fork copies nothing large), beside the peak of
a tiny npz of the same record (the interpreter's base). --in-memory adds
the same runs without stream=true (the TensorDataset, its members
converted a piece at a time: Note [Converting a piece at a time] in
interp/data/dataset.cpp). Needs Debian's numpy (/usr/bin/python3); not part of CI:
    /usr/bin/python3 bench/npz_memory.py [--ss build/ss] [--mib 512]
"""
import argparse
import os
import re
import subprocess
import sys

ITEM_BYTES = 256 * 4 + 8  # x [256] f32 and y i64

GEN = """
import sys
import numpy as np
n, d = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(3)
x = (rng.integers(0, 256, (n, 256), dtype=np.uint8) / 255).astype(np.float32)
y = np.arange(n, dtype=np.int64)
np.savez(d + "/big.npz", x=x, y=y)
np.savez_compressed(d + "/big_z.npz", x=x, y=y)
np.savez(d + "/tiny.npz", x=x[:10], y=y[:10])
"""

PROGRAM = """
data Big:
    x: [256] f32
    y: i64
fn main():
    let ds = dataset(Big, "{file}"{stream})
    let seen = 0
    for b in ds.batches(1024):
        seen += len(b.y)
    print(seen)
"""


def peak_mb(ss, d, file, stream):
    prog = os.path.join(d, "prog.ss")
    with open(prog, "w") as f:
        f.write(PROGRAM.format(file=os.path.join(d, file),
                               stream=", stream=true" if stream else ""))
    r = subprocess.run(["/usr/bin/time", "-v", ss, "run", prog],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ss run failed on {file}:\n{r.stderr}")
    kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(kb.group(1)) / 1024, r.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--dir", default="/tmp/ss_npz_memory")
    ap.add_argument("--in-memory", action="store_true")
    a = ap.parse_args()
    n = (a.mib << 20) // 1024  # items of 1 KiB of x
    os.makedirs(a.dir, exist_ok=True)
    stamp = os.path.join(a.dir, f"made_{n}")
    if not os.path.exists(stamp):
        # In its own process, so that no numpy array is in this one.
        subprocess.run(["/usr/bin/python3", "-c", GEN, str(n), a.dir],
                       check=True)
        open(stamp, "w").close()
    data_mb = n * ITEM_BYTES / 2**20
    print(f"data: {n} items, {data_mb:.0f} MB (x {a.mib} MiB f32, y i64)")
    for stream in [True] + ([False] if a.in_memory else []):
        mode = "stream=true" if stream else "in memory"
        base, _ = peak_mb(a.ss, a.dir, "tiny.npz", stream)
        print(f"{mode}: tiny npz (base) peak {base:.0f} MB")
        for file, kind in (("big.npz", "stored"), ("big_z.npz", "deflated")):
            size = os.path.getsize(os.path.join(a.dir, file)) / 2**20
            mb, seen = peak_mb(a.ss, a.dir, file, stream)
            print(f"{mode}: {kind} ({size:.0f} MB file, {seen} items): "
                  f"peak {mb:.0f} MB = base + {mb - base:.0f} MB "
                  f"= base + {(mb - base) / data_mb:.2f}x the data")


if __name__ == "__main__":
    main()
