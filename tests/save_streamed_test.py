#!/usr/bin/python3
"""`save` streams the file (Note [A streaming save] in
interp/builtins/checkpoint.cpp), through `ss run`'s controller and `ss
worker`s on cpu[0 1 2], with and without `shard params`.

One device trains a model of three f32 params ([1024 1024] twice and
[1024 1001], whose 1,025,024 values do not divide among three ranks: the
last piece is padded) two AdamW steps and saves it twice, with and without
the optimizer. Each layout then loads that file, runs a worker fn that
takes the model and optimizer `mut` (so the workers hold the newer copy)
and changes neither, and saves both files again. The oracle is the one
device's files: the bytes must be the same (header, metadata and data),
since the values went through a load and a save unchanged.

Memory, from SS_MEMORY_REPORT (Note [Counting storage bytes]): the
controller's tensors at the save's peak exceed what it held before by at
most one tensor, 4,194,304 bytes (1024 x 1024 x 4, computed here), not the
file. (That bound alone would not tell the old whole fetch apart: it
replaced the controller's copy as it read the reply, whose bytes are no
tensor's; the fetch counts and the workers' bound below do: the whole
fetch made each `shard params` worker hold 27.7 MiB above its pieces.)
With `shard params` each worker, while answering one fetch, holds at most
one gathered param above its pieces: the same bound plus 4,096 bytes of
slack (the padding of the pieces, at most two values, and the 64-byte
alignment of a buffer). Layout runs on several devices fetch one tensor at
a time: worker 0 reports 1 + 9 fetches for the save with the optimizer
(its layout, then each tensor) and 3 for the one without.

usage: save_streamed_test.py SS_BINARY
"""
import os
import re
import subprocess
import sys
import tempfile

MODEL = """devices cpu
{options}
dim N = 1024
# 1024 x 1001 values do not divide among three ranks: c's last piece pads.
dim P = 1001

model Big:
    a: [N N] = normal(std=0.03)
    b: [N N] = normal(std=0.03)
    c: [N P] = normal(std=0.03)
"""

TRAIN = MODEL + """
fn objective(m: Big, x: [b N]) -> f32:
    let h = relu(x @ m.a) @ m.b
    return mean(h @ m.c)

fn train(mut m: Big, mut o: AdamW[Big], x: [b N]) -> f32:
    let value, grads = value_and_grad(objective, m, x)
    update(m, o, grads)
    return value

fn main():
    let x = randn([12 N], seed=5)
    let m = Big.init(seed=3)
    let opt = adamw(m, lr=2e-3)
    print(train(m, opt, x))
    print(train(m, opt, x))
    save("ref_opt.safetensors", m, opt)
    save("ref.safetensors", m)
"""

RESAVE = MODEL + """
fn touch(mut m: Big, mut opt: AdamW[Big]) -> f32:
    return sum(m.a)

fn main():
    let m, opt = load("ref_opt.safetensors", Big, adamw)
    print(touch(m, opt))
    save("out_opt.safetensors", m, opt)
    save("out.safetensors", m)
"""

LARGEST = 1024 * 1024 * 4  # bytes of a or b, the largest tensor
SLACK = 4096
SAVE = re.compile(r"^ss: memory during save: (\d+) bytes above", re.M)
FETCH = re.compile(r"^\[worker (\d+)\] ss worker \d+: memory after a fetch: "
                   r"storage live ([\d.]+) MiB peak ([\d.]+) MiB", re.M)


def run(ss, folder, src, devices=None):
    with open(os.path.join(folder, "prog.ss"), "w") as f:
        f.write(src)
    cmd = [ss, "run", "prog.ss"] + (["--devices", devices] if devices else [])
    p = subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                       env=dict(os.environ, SS_MEMORY_REPORT="1"),
                       timeout=120)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n"
                 f"{p.stdout}\n{p.stderr}")
    return p.stderr


def same_bytes(folder, a, b):
    with open(os.path.join(folder, a), "rb") as f, \
            open(os.path.join(folder, b), "rb") as g:
        return f.read() == g.read()


def main():
    ss = os.path.abspath(sys.argv[1])
    failed = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failed.append(what)

    with tempfile.TemporaryDirectory() as folder:
        run(ss, folder, TRAIN.format(options=""))
        for devices, shard in ((None, False), ("cpu[0 1 2]", False),
                               ("cpu[0 1 2]", True)):
            name = (devices or "one device") + (" shard params" if shard
                                                else "")
            err = run(ss, folder, RESAVE.format(
                options="    shard params" if shard else ""), devices)
            check(same_bytes(folder, "out_opt.safetensors",
                             "ref_opt.safetensors"),
                  f"{name}: save(path, m, opt) is one device's file")
            check(same_bytes(folder, "out.safetensors", "ref.safetensors"),
                  f"{name}: save(path, m) is one device's file")
            above = [int(x) for x in SAVE.findall(err)]
            check(len(above) == 2 and max(above) <= LARGEST,
                  f"{name}: the controller's tensors grew by {above} bytes "
                  f"during the saves (at most {LARGEST})")
            if not devices:
                continue
            fetches = [(float(live), float(peak))
                       for rank, live, peak in FETCH.findall(err)
                       if rank == "0"]
            check(len(fetches) == 10 + 3,
                  f"{name}: worker 0 answered {len(fetches)} fetches "
                  f"(13: one a tensor, and the optimizer's layout)")
            if shard:
                # MiB printed with one decimal: 0.05 MiB of rounding each.
                worst = max(peak - live for live, peak in fetches)
                bound = (LARGEST + SLACK) / 2**20 + 0.1
                check(worst <= bound,
                      f"{name}: a worker's tensors grew by {worst:.1f} MiB "
                      f"answering a fetch (at most {bound:.2f})")
    if failed:
        sys.exit(f"{len(failed)} failed")


if __name__ == "__main__":
    main()
