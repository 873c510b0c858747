#!/usr/bin/python3
"""The README MLP's step on two hosts against one (issue 26's figures):
cpu[0 1] with the workers on two network-namespace hosts reached through
ssh (tests/multihost/multihost_test.py builds them: a bridge, veths, an
sshd each), against the same two workers as children of `ss run` on this
machine, and, between the two, over TCP on loopback (`--hosts
127.0.0.1:2 --launch '{cmd}'`: the control channel's cost without the
links'). compare_ddp.py's program and data, the loop timed by progress()
after one untimed step, at batch 64 and 6144, alternating the three;
medians of --repeats. Targets: at most 1.2x at batch 64, 1.05x at 6144.

Benchmarks report, tests assert: nothing here fails a build. Needs root
and openssh-server. Run:
    /usr/bin/python3 bench/hosts_bench.py [--ss build/ss] [--repeats 3]
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "multihost"))
import compare_ddp  # noqa: E402
from compare_pytorch import make_inputs  # noqa: E402
import multihost_test  # noqa: E402


def step_ms(ss, folder, batch, extra):
    """ms a step of the README MLP takes on cpu[0 1], the workers placed
    by [extra] (none: children of ss run)."""
    return 1000 * compare_ddp.step_seconds(
        ss, folder, compare_ddp.WARM_PROGRAM,
        ["--devices", "cpu[0 1]", "-D", f"B={batch}"] + extra)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ss", default="build/ss")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    why = multihost_test.skip_reason()
    if why:
        sys.exit("hosts_bench: " + why)
    print(f"load average before: {' '.join(map(str, os.getloadavg()))}")
    with multihost_test.Hosts(os.path.abspath(args.ss)) as h, \
            tempfile.TemporaryDirectory() as folder:
        ways = {
            "one host": [],
            "loopback TCP": ["--hosts", "127.0.0.1:2", "--launch", "{cmd}"],
            "two hosts": ["--hosts", f"{h.addrs[0]}:1,{h.addrs[1]}:1",
                          "--launch", h.launch],
        }
        for batch, steps in ((64, 200), (6144, 20)):
            make_inputs(folder, steps, batch)
            ms = {k: [] for k in ways}
            for _ in range(args.repeats):  # alternating the three
                for k, extra in ways.items():
                    ms[k].append(step_ms(h.ss, folder, batch, extra))
            med = {k: statistics.median(v) for k, v in ms.items()}
            target = 1.2 if batch == 64 else 1.05
            print(f"README MLP step at batch {batch} on cpu[0 1] (medians of "
                  f"{args.repeats}; runs {ms}):")
            for k in ways:
                print(f"  {k}: {med[k]:.3f} ms = "
                      f"{med[k] / med['one host']:.2f}x one host")
            print(f"  target: two hosts <= {target}x one host")
    print(f"load average after: {' '.join(map(str, os.getloadavg()))}")


if __name__ == "__main__":
    main()
