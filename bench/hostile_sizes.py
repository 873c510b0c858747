#!/usr/bin/env python3
"""Time and memory of `ss` on inputs a user controls, at N and 10N.

Issue 32 ("Bounds stated and tested"): every size a user controls has a
bound that is an error, and below it time and memory grow linearly: 10x the
input takes at most 15x the time and memory. This prints, for each case,
the wall time and peak RSS (GNU time's %M) at N and 10N, their ratios, and
whether both are within 15x. Runs alternate (N, 10N, N, 10N, ...) and each
figure is the median of --repeat runs; the load average is printed, as
these machines are noisy. docs/bounds.md lists the bounds themselves.

    /usr/bin/python3 bench/hostile_sizes.py [--ss build/ss] [--repeat 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def program_errors(n):
    lines = ["fn main():", "    let keep = 1"]
    lines += [f"    let a{i} = nope{i}" for i in range(n)]
    return "\n".join(lines) + "\n"


def program_lets(n):
    lines = ["fn main():", "    let a0 = 1"]
    lines += [f"    let a{i} = a{i - 1} + 1" for i in range(1, n)]
    lines.append(f"    print(a{n - 1})")
    return "\n".join(lines) + "\n"


def program_fields(n):
    lines = ["model Big:"]
    lines += [f"    w{i}: [2] = zeros()" for i in range(n)]
    lines += ["", "fn main():", "    let m = Big.init(seed=0)", "    print(m.w0)"]
    return "\n".join(lines) + "\n"


def program_fns(n):
    out = []
    for i in range(n):
        out += [f"fn f{i}(x: int) -> int:", f"    return x + {i}", ""]
    out += ["fn main():", f"    print(f{n - 1}(1))"]
    return "\n".join(out) + "\n"


def repl_lets(n):
    return "".join(f"let a{i} = {i}\n" for i in range(n)) + "a0\n"


# name, N, what it writes, the ss command, whether the text is stdin
CASES = [
    ("ss check: unknown names (errors)", 10000, program_errors, ["check"], False),
    ("ss check: a chain of lets", 10000, program_lets, ["check"], False),
    ("ss run: a model's fields", 10000, program_fields, ["run"], False),
    ("ss check: fns", 5000, program_fns, ["check"], False),
    ("ss repl: let inputs", 1000, repl_lets, ["repl"], True),
]


def measure(ss, cmd, path, stdin_file):
    args = ["/usr/bin/time", "-f", "%e %M", ss] + cmd
    if not stdin_file:
        args.append(path)
    with open(path if stdin_file else os.devnull, "rb") as stdin:
        r = subprocess.run(args, stdin=stdin, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    last = r.stderr.strip().splitlines()[-1].split()
    return float(last[0]), int(last[1]) / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    ok = True
    with tempfile.TemporaryDirectory() as d:
        for name, n, make, cmd, stdin_file in CASES:
            paths = {}
            for k in (n, 10 * n):
                paths[k] = os.path.join(d, f"case_{k}.ss")
                with open(paths[k], "w") as f:
                    f.write(make(k))
            runs = {n: [], 10 * n: []}
            for _ in range(a.repeat):
                for k in (n, 10 * n):
                    runs[k].append(measure(a.ss, cmd, paths[k], stdin_file))
            t = {k: statistics.median(x[0] for x in v) for k, v in runs.items()}
            m = {k: statistics.median(x[1] for x in v) for k, v in runs.items()}
            rt = t[10 * n] / max(t[n], 0.01)
            rm = m[10 * n] / max(m[n], 1.0)
            good = rt <= 15 and rm <= 15
            ok = ok and good
            print(f"{name}: N={n}: {t[n]:.2f} s {m[n]:.0f} MB; "
                  f"10N: {t[10 * n]:.2f} s {m[10 * n]:.0f} MB; "
                  f"ratios {rt:.1f}x time {rm:.1f}x memory: "
                  f"{'within 15x' if good else 'OVER 15x'}")
    print(f"load average after: {os.getloadavg()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
