#!/usr/bin/python3
"""`ss lsp` under a hostile editor (issue 32 item 10): how long the server
takes as the work grows tenfold.

- Import graphs: N documents, file i importing file i+1 (a chain) or also
  the last importing the first (a ring), or each importing one hub that
  imports 200 files (a fan-in; the hub and its imports are on the disk,
  not open), written to a folder and opened all at once, first to last
  and last to first. Timed from the first didOpen until every document
  has had its diagnostics published and a hover sent after the last
  didOpen is answered.
- A didChange storm: an 18 KB program (bench/gen_program.py) opened, then
  K incremental didChange notifications (one character typed at a time,
  as an editor sends them), then a hover. Timed from the first didChange
  to the hover's answer.

Each line gives the seconds for N and 10N (K and 10K), their ratio (the
goal: at most 15 for 10x the input) and the server's peak memory (VmHWM);
after the large graph, the time of a hover on an unchanged document (the
goal: 50 ms);
the load average is printed before and after, since the build machine is
shared. Benchmarks report, tests assert: nothing here fails a build.

    bench/lsp_scale.py [--ss build/ss] [--n 200] [--k 50] [--cap 300]
                       [--only graph|storm] [--shapes ring,chain,fan-in]
                       [--repeat 3]
"""
import argparse
import os
import queue
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lsp"))
from lsp_client import Client  # noqa: E402


def graph_files(folder, n, shape):
    """Writes f0.ss .. f{n-1}.ss, each importing the next ("ring",
    "chain") or hub.ss ("fan-in", the hub importing l0.ss .. l199.ss);
    returns their (uri, text) in order."""
    if shape == "fan-in":
        return fan_in_files(folder, n)
    ring = shape == "ring"
    files = []
    for i in range(n):
        nxt = i + 1 if i + 1 < n else (0 if ring else None)
        text = (f'import "f{nxt}.ss"\n\n' if nxt is not None else "")
        call = f"f{nxt}(x) + " if nxt is not None and nxt > i else ""
        text += f"fn f{i}(x: f32) -> f32 = {call}x * 2.0\n"
        path = os.path.join(folder, f"f{i}.ss")
        with open(path, "w") as f:
            f.write(text)
        files.append(("file://" + path, text))
    return files


FAN_IN_LEAVES = 200


def fan_in_files(folder, n):
    def write(name, text):
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    for i in range(FAN_IN_LEAVES):
        write(f"l{i}.ss", f"fn l{i}(x: f32) -> f32 = x * 2.0 + {i}.0\n")
    write("hub.ss", "".join(f'import "l{i}.ss"\n'
                            for i in range(FAN_IN_LEAVES)) +
          f"\nfn hub(x: f32) -> f32 = l0(x) + l{FAN_IN_LEAVES - 1}(x)\n")
    files = []
    for i in range(n):
        text = f'import "hub.ss"\n\nfn f{i}(x: f32) -> f32 = hub(x) * 2.0\n'
        write(f"f{i}.ss", text)
        files.append(("file://" + os.path.join(folder, f"f{i}.ss"), text))
    return files


def peak_kib(client):
    try:
        with open(f"/proc/{client.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_all(client, uris, rid, deadline):
    """Waits for a publishDiagnostics of every uri in [uris] and the
    answer to [rid]; False past [deadline]."""
    left = set(uris)
    answered = False
    while left or not answered:
        try:
            m = client.inbox.get(timeout=max(0.01, deadline - time.time()))
        except queue.Empty:
            return False
        if m is None or time.time() > deadline:
            return False
        if m.get("method") == "textDocument/publishDiagnostics":
            left.discard(m["params"]["uri"])
        elif m.get("id") == rid:
            answered = True
    return True


def time_graph(ss, n, shape, reverse, cap):
    with tempfile.TemporaryDirectory() as folder:
        files = graph_files(folder, n, shape)
        if reverse:
            files.reverse()
        c = Client(ss)
        try:
            c.initialize()
            start = time.time()
            for uri, text in files:
                c.open(uri, text)
            rid = c.request_async("textDocument/hover", {
                "textDocument": {"uri": files[-1][0]},
                "position": {"line": 0, "character": 0}})
            ok = wait_all(c, [u for u, _ in files], rid, start + cap)
            took = time.time() - start
            if not ok:
                return None, peak_kib(c), None
            # An unchanged document's answer, once all is checked.
            t0 = time.time()
            c.at("textDocument/hover", files[0][0], 2, 3)
            return took, peak_kib(c), time.time() - t0
        finally:
            c.kill()


def time_storm(ss, k, cap):
    text = subprocess.run([sys.executable,
                           os.path.join(HERE, "gen_program.py"),
                           "--lines", "700"], capture_output=True,
                          text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "storm.ss")
        with open(path, "w") as f:
            f.write(text)
        uri = "file://" + path
        c = Client(ss)
        try:
            c.initialize()
            c.open(uri, text)
            c.diagnostics(uri, timeout=cap)
            line = text.count("\n")  # the empty line after the last
            start = time.time()
            for i in range(k):
                c.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": i + 2},
                    "contentChanges": [{
                        "range": {"start": {"line": line, "character": i},
                                  "end": {"line": line, "character": i}},
                        "text": "#" if i == 0 else "x"}]})
            rid = c.request_async("textDocument/hover", {
                "textDocument": {"uri": uri},
                "position": {"line": 0, "character": 0}})
            try:
                c.response(rid, timeout=cap)
            except AssertionError:
                return None, peak_kib(c), len(text)
            return time.time() - start, peak_kib(c), len(text)
        finally:
            c.kill()


def median_of(k, run):
    """Each figure of [run]'s result, the median of [k] runs (a run given
    up, None, counts as the slowest)."""
    runs = [run() for _ in range(k)]
    return [sorted(figures, key=lambda x: (x is None, x or 0))[k // 2]
            for figures in zip(*runs)]


def fmt(t, cap):
    return f"{t:7.2f} s" if t is not None else f"  >{cap:.0f} s"


def ratio(a, b):
    return f"{b / a:5.1f}x" if a and b else "    ?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--n", type=int, default=200,
                    help="documents of the small graph (the large has 10x)")
    ap.add_argument("--k", type=int, default=50,
                    help="didChanges of the small storm (the large has 10x)")
    ap.add_argument("--cap", type=float, default=300,
                    help="seconds after which a run is given up")
    ap.add_argument("--only", choices=["graph", "storm"], default=None)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each graph; each figure is their median")
    ap.add_argument("--shapes", default="ring,chain,fan-in",
                    help="the import graphs, of ring, chain, fan-in")
    args = ap.parse_args()
    ss = os.path.abspath(args.ss)
    print(f"ss lsp scale ({ss})")
    print(f"load average before: {' '.join(map(str, os.getloadavg()))}")
    if args.only != "storm":
        for shape in args.shapes.split(","):
            for reverse in (False, True):
                what = (f"{shape:6} "
                        f"{'last to first' if reverse else 'first to last'}")
                t1, m1, _ = median_of(args.repeat, lambda: time_graph(
                    ss, args.n, shape, reverse, args.cap))
                t2, m2, h = median_of(args.repeat, lambda: time_graph(
                    ss, 10 * args.n, shape, reverse, args.cap))
                hover = f"{1000 * h:6.1f} ms" if h is not None else "     ?"
                print(f"{what:24} N={args.n:<5} {fmt(t1, args.cap)} "
                      f"{m1 // 1024:5} MiB   N={10 * args.n:<6} "
                      f"{fmt(t2, args.cap)} {m2 // 1024:5} MiB  "
                      f"{ratio(t1, t2)}  then a hover {hover}  "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
    if args.only != "graph":
        t1, m1, size = time_storm(ss, args.k, args.cap)
        t2, m2, _ = time_storm(ss, 10 * args.k, args.cap)
        print(f"{f'didChange storm {size // 1024} KB':24} K={args.k:<5} "
              f"{fmt(t1, args.cap)} {m1 // 1024:5} MiB   K={10 * args.k:<6} "
              f"{fmt(t2, args.cap)} {m2 // 1024:5} MiB  {ratio(t1, t2)}")
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()
