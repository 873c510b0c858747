#!/usr/bin/env python3
"""Issue 32's hostile cases, one `ss` process each: its time, peak memory,
exit code and what it said.

Each case is a repro the issue lists (the item number is its first column),
run as a user runs it (`ss run`, `ss check`, `ss repl` on stdin) in a fresh
folder. A case's expected outcome is its test's business (the conformance
cases and the Catch2 tests named in docs/bounds.md): this prints what the
closing note reports, the wall time and peak RSS (GNU time's %M) beside the
first line of the output, so a regression in time or memory shows here. The
cases that need another user, a container, sockets or an editor are their
tests' (the stranger, neighbours, pty and LSP tests, bench/lsp_scale.py).

    /usr/bin/python3 bench/hostile_cases.py [--ss build/ss] [--only 4]
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time


def npy_header(descr, shape):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{s}, " for s in shape))
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()


def idx(kind, dims, body=b""):
    return (b"\0\0" + bytes([kind, len(dims)]) +
            b"".join(struct.pack(">I", d) for d in dims) + body)


def setup_files(d):
    os.makedirs(os.path.join(d, "huge"), exist_ok=True)
    with open(os.path.join(d, "huge", "x.npy"), "wb") as f:
        f.write(npy_header("<f4", [1 << 62]) + b"\0" * 16)  # 2^62 rows
    os.makedirs(os.path.join(d, "mnist"), exist_ok=True)
    # Item 11: the labels file is an images file (its header says so).
    with open(os.path.join(d, "mnist", "train-images-idx3-ubyte"), "wb") as f:
        f.write(idx(0x08, [10, 28, 28], b"\0" * 7840))
    with open(os.path.join(d, "mnist", "train-labels-idx1-ubyte"), "wb") as f:
        f.write(idx(0x08, [10, 28, 28], b"\0" * 7840))
    with open(os.path.join(d, "bom.csv"), "wb") as f:
        f.write(b"\xef\xbb\xbfx_0,y\r1.5,2\r")
    with open(os.path.join(d, "nul.csv"), "wb") as f:
        f.write(b"x_0,y\n0.1\0,2\n")
    for k in range(70):  # Item 9: an import chain 70 files deep
        with open(os.path.join(d, f"m{k}.ss"), "w") as f:
            nxt = f'import "m{k + 1}.ss"\n' if k < 69 else ""
            f.write(nxt + f"fn f{k}() -> i64:\n    return {k}\n")
    private = os.path.join(d, "private.safetensors")
    if os.path.exists(private):
        os.remove(private)


def lets(n):
    return "".join(f"let a{i} = {i}\n" for i in range(n)) + f"a{n - 1}\n"


RUN = "run"
CASES = [
    ("1", f"{sink} to /dev/full, 3 writes", RUN, f"""
fn main():
    let s = {sink}("/dev/full")
    s.write(logs(loss=1.0))
    s.write(logs(loss=2.0))
    s.write(logs(loss=3.0))
    print("done")
""") for sink in ("jsonl", "csv")
] + [
    ("1", "print and stdout() to /dev/full", "full-stdout", """
fn main():
    print("hello")
    let s = stdout()
    s.write(logs(loss=1.0))
    print("done")
"""),
    ("2", "roll by 2^53 + 7", RUN, """
fn main():
    print(roll(arange(8), 9007199254740999, over=0))
"""),
    ("2", "arange(3) + 2^53 + 1", RUN,
     "fn main():\n    print(arange(3) + 9007199254740993)\n"),
    ("3", "arange(8) // 0", RUN, "fn main():\n    print(arange(8) // 0)\n"),
    ("3", "arange(8) % 0 on cpu[0 1 2]", RUN,
     "devices cpu[0 1 2]\n\nfn main():\n    print(arange(8) % 0)\n"),
    ("4", "for i in range(2^62): break", RUN, """
fn main():
    for i in range(4611686018427387904):
        print(i)
        break
"""),
    ("4", "range(10^7) left after 3", RUN, """
fn main():
    let n = 0
    for i in range(10000000):
        n += 1
        if n == 3:
            break
    print(n)
"""),
    ("4", "synthetic_digits take 2^62", RUN, """
data Digit:
    img: [784] in 0.0..=1.0
    label: i64 in 0..10
fn main():
    let ds = synthetic_digits(Digit, 16, seed=0).take(4611686018427387904)
    print(len(ds))
    for b in ds.batches(4):
        print(len(b.label))
"""),
    ("4", "an npy declaring 2^62 rows", RUN, """
data Row:
    x: f32
fn main():
    print(len(dataset(Row, "huge")))
"""),
    ("7", "f-string precision 99999999999", RUN,
     'fn main():\n    print(f"{1.5:.99999999999f}")\n'),
    ("7", "an f-string of 300 characters", RUN,
     'fn main():\n    print(len(f"' + "x" * 299 + '{1 + 1}"))\n'),
    ("8", "the repl: 1,000 lets", "repl", lets(1000)),
    ("8", "the repl: 2,000 lets", "repl", lets(2000)),
    ("8", "the repl: :load of /dev/zero", "repl", ":load /dev/zero\n1 + 1\n"),
    ("9", "an import chain 70 files deep", "check",
     'import "m0.ss"\n\nfn main():\n    print(f0())\n'),
    ("11", "MNIST labels that are images", RUN, """
data Digit:
    img: [784] in 0.0..=1.0
    label: i64 in 0..10
fn main():
    print(len(mnist(Digit, "mnist")))
"""),
    ("11", "an MNIST field typed [h w]", "check", """
data Digit:
    img: [h w] f32
    label: i64
fn main():
    print(len(mnist(Digit, "mnist")))
"""),
    ("12", "save over a 0600 checkpoint", RUN, """
model M:
    w: [2] = zeros()
fn main():
    let m = M.init(seed=0)
    save("private.safetensors", m)
    save("private.safetensors", m)
    print("saved")
"""),
    ("12", "save to a 252-byte name", RUN, """
model M:
    w: [2] = zeros()
fn main():
    let m = M.init(seed=0)
    save(\"""" + "n" * 240 + """.safetensors", m)
    print("saved")
"""),
    ("14", "a CSV with a BOM and CR line ends", RUN, """
data P:
    x: [1] f32
    y: i64
fn main():
    print(len(dataset(P, "bom.csv")))
"""),
    ("14", "a CSV cell with a NUL", RUN, """
data P:
    x: [1] f32
    y: i64
fn main():
    print(len(dataset(P, "nul.csv")))
"""),
    ("14", "-D D=2^63 - 1", "define",
     "dim D = 4\n\nfn main():\n    print(D)\n"),
    ("14", "a file with no main", RUN, "fn f():\n    print(1)\n"),
]


def run_case(ss, d, mode, text):
    prog = os.path.join(d, "case.ss")
    if mode == "repl":
        cmd = [ss, "repl"]
        stdin = text.encode()
    else:
        with open(prog, "w") as f:
            f.write(text)
        stdin = b""
        if mode == "check":
            cmd = [ss, "check", prog]
        elif mode == "define":
            cmd = [ss, "run", "-D", "D=9223372036854775807", prog]
        else:
            cmd = [ss, "run", prog]
    if d and mode != "repl" and text.count("private.safetensors"):
        # Item 12: the user made the checkpoint private before this save.
        p = os.path.join(d, "private.safetensors")
        with open(p, "wb") as f:
            f.write(b"")
        os.chmod(p, 0o600)
    t0 = time.monotonic()
    if mode == "full-stdout":  # item 1: `ss run p.ss > /dev/full`
        with open("/dev/full", "w") as full:
            r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd,
                               input=stdin, cwd=d, stdout=full,
                               stderr=subprocess.PIPE, timeout=300)
        r.stdout = b""
    else:
        r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, input=stdin,
                           cwd=d, capture_output=True, timeout=300)
    wall = time.monotonic() - t0
    err = r.stderr.decode(errors="replace").strip().splitlines()
    rss_kb = int(err[-1]) if err and err[-1].isdigit() else -1
    out = r.stdout.decode(errors="replace").strip().splitlines()
    # What it said: its first error line, else its last output line.
    said = [l for l in err[:-1] if l.strip()]
    first = said[0] if said else (out[-1] if out else "")
    return r.returncode, wall, rss_kb / 1024, first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--only", default=None, help="one item's cases")
    a = ap.parse_args()
    ss = os.path.abspath(a.ss)
    print(f"load average {os.getloadavg()[0]:.2f}; {ss}")
    print(f"{'item':>4}  {'case':<36} {'rc':>3} {'time':>7} {'peak':>8}  said")
    with tempfile.TemporaryDirectory() as d:
        setup_files(d)
        for item, name, mode, text in CASES:
            if a.only and item != a.only:
                continue
            rc, wall, mb, first = run_case(ss, d, mode, text)
            extra = ""
            if "0600" in name:
                extra = " (mode %o)" % (
                    os.stat(os.path.join(d, "private.safetensors")).st_mode
                    & 0o777)
            print(f"{item:>4}  {name:<36} {rc:>3} {wall:>6.2f}s "
                  f"{mb:>6.0f}MB  {first[:90]}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
