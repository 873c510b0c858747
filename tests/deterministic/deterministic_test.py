#!/usr/bin/python3
"""Deterministic mode (issue 28; Note [Deterministic mode] in
interp/devices/lower/chunks.h), through `ss run` and `ss conformance` as
users run them:

  * the control: conformance/deterministic/readme_mlp.ss without its
    `deterministic` line, compared with no tolerance, differs from one
    device on three (so the suite's tolerance-0 comparison can fail, and
    does where the mode is off), and with the line it does not;
  * a checkpoint saved on three devices and training resumed from it on
    two write the files one device writes through the same two runs,
    byte for byte: the csv log of every step and the final checkpoint;
    with data parallelism (the README MLP), and with `split H` and
    `shard params` (a transformer of 6 heads: Note [Heads one at a time]
    in interp/devices/lower/heads.cpp);
  * one device in the mode prints what one device without it prints, to
    1e-5 (conformance/deterministic's cases, dist/'s split H ones);
  * `ss explain --json` gives the chunk size (8 for the README MLP's
    batches of 64), or with split H the heads' dim;
  * devices whose kernels differ (a host of another CPU, made here by
    ss_test_hooks' SHAPESCRIPT_TEST_KERNELS) refuse to start: a located
    ValueError naming both (Note [Same kernels everywhere]).

usage: deterministic_test.py SS_BINARY SS_TEST_HOOKS_BINARY
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = os.path.join(HERE, "..", "..", "conformance", "deterministic",
                    "readme_mlp.ss")

RESUME = """devices cpu
    deterministic

dim D = 784
dim Hd = 32
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(relu(batch.img @ m.w1) @ m.w2, batch.label)

fn step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn main(args: list[str]):
    let data = synthetic_digits(Digit, 300, seed=3)
    if args[0] == "first":
        let m = Mlp.init(seed=0)
        let opt = adamw(m, lr=1e-3)
        let log = csv("first.csv")
        for batch in data.batches(50, shuffle=1):
            log.write(step(m, opt, batch))
        save("half.safetensors", m, opt)
    else:
        let m, opt = load("half.safetensors", Mlp, adamw)
        let log = csv("rest.csv")
        for batch in data.batches(44, shuffle=2):
            log.write(step(m, opt, batch))
        save("final.safetensors", m, opt)
"""


RESUME_HEADS = """devices cpu
    split H
    shard params
    deterministic

dim T = 8
dim D = 24
dim H = 6
dim Dh = 4

model Block:
    w_qkv: [D (3 H Dh)] = normal(std=0.05)
    w_o: [(H Dh) D] = normal(std=0.05)
    up: Linear[D D]

fn forward(m: Block, x: [b T D], mode: Mode) -> [b T D]:
    let q, k, v = split(layer_norm(x, over=D) @ m.w_qkv,
                        b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = dropout(softmax(masked_fill(s, not causal(n, t), -inf), over=t),
                    0.1, mode)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    let h = x + rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o
    return h + gelu(linear(m.up, h))

fn loss(m: Block, x: [b T D], y: [b T D], mode: Mode) -> f32:
    return mse(forward(m, x, mode), y)

fn step(mut m: Block, mut opt: AdamW[Block], x: [b T D], y: [b T D],
        mode: Mode) -> Logs:
    let l, g = value_and_grad(loss, m, x, y, mode)
    update(m, opt, g)
    return logs(loss=l, grad_norm=norm(g))

fn main(args: list[str]):
    let x = randn([5 T D], seed=1)
    let y = roll(x, 1, over=T)
    if args[0] == "first":
        let m = Block.init(seed=0)
        let opt = adamw(m, lr=1e-3)
        let log = csv("first.csv")
        for i in range(4):
            log.write(step(m, opt, x, y, Train(seed=i)))
        save("half.safetensors", m, opt)
    else:
        let m, opt = load("half.safetensors", Block, adamw)
        let log = csv("rest.csv")
        for i in range(4):
            log.write(step(m, opt, x, y, Train(seed=10 + i)))
        save("final.safetensors", m, opt)
"""


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def control(ss, folder):
    """The suite's comparison with no tolerance, with the mode and
    without it."""
    text = open(CASE).read()
    off = text.replace("    deterministic\n", "", 1)
    off = off.replace("# expect: ok\n", "# expect: ok\n# tolerance: 0\n", 1)
    assert off != text and "deterministic\n" not in off.split("dim D")[0]
    failures = []
    for name, src, want_pass in (("on.ss", text, True),
                                 ("off.ss", off, False)):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(src)
        rc, out = run([ss, "conformance", path, "--devices", "cpu",
                       "--devices", "cpu[0 1 2]"], folder)
        three = [l for l in out.splitlines() if "[cpu[0 1 2]]" in l]
        if want_pass and (rc != 0 or not three or
                          not three[0].startswith("PASS")):
            failures.append(f"with `deterministic`, three devices are not "
                            f"one device's bits:\n{out}")
        if not want_pass and (rc == 0 or not three or
                              "not the result of one device" not in three[0]):
            failures.append(f"without `deterministic`, the tolerance-0 "
                            f"comparison did not catch three devices' "
                            f"rounding:\n{out}")
    return failures


def resume(ss, folder, program, what):
    """first on [a], the rest on [b]: the files written, by name."""
    def files(a, b):
        d = tempfile.mkdtemp(dir=folder)
        with open(os.path.join(d, "resume.ss"), "w") as f:
            f.write(program)
        for phase, devices in (("first", a), ("rest", b)):
            rc, out = run([ss, "run", "resume.ss", "--devices", devices,
                           "--", phase], d)
            if rc != 0:
                sys.exit(f"FAIL: ss run resume.ss --devices '{devices}' -- "
                         f"{phase} exited {rc}:\n{out}")
        got = {}
        for name in ("first.csv", "half.safetensors", "rest.csv",
                     "final.safetensors"):
            with open(os.path.join(d, name), "rb") as f:
                got[name] = f.read()
        return got

    one = files("cpu", "cpu")
    moved = files("cpu[0 1 2]", "cpu[0 1]")
    failures = []
    for name in one:
        if one[name] != moved[name]:
            failures.append(f"{what}: {name}: saved on cpu[0 1 2] and "
                            f"resumed on cpu[0 1], not one device's bytes")
    lines = one["rest.csv"].decode().splitlines()
    if len(lines) < 5 or not re.match(r"step,loss,grad_norm", lines[0]):
        failures.append(f"{what}: rest.csv is not the log expected:\n"
                        f"{lines[:3]}")
    return failures


NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def oracle(ss, folder):
    """One device in the mode against one device without it, an oracle
    the mode does not compute (the plain evaluator, itself checked against
    torch): every number printed agrees to 1e-5 relative (the dist/ cases'
    tolerance: the same sums in another order). For the mode's own cases
    and dist/'s split H cases that run (Note [Heads one at a time])."""
    root = os.path.join(HERE, "..", "..", "conformance")
    cases = sorted(glob.glob(os.path.join(root, "deterministic", "*.ss")))
    cases += sorted(glob.glob(os.path.join(root, "dist", "split_heads_*.ss")))
    failures = []
    for path in cases:
        text = open(path).read()
        if "# expect: ok" not in text:
            continue  # an error case: no numbers to compare
        plain = text.replace("    deterministic\n", "", 1)
        got = []
        for src, flags in ((plain, []), (text, ["--deterministic"])):
            d = tempfile.mkdtemp(dir=folder)
            with open(os.path.join(d, "case.ss"), "w") as f:
                f.write(src)
            rc, out = run([ss, "run", "case.ss", "--devices", "cpu"] + flags,
                          d)
            got.append((rc, [float(x) for x in NUMBER.findall(out)]))
        (rc0, a), (rc1, b) = got
        name = os.path.basename(path)
        if rc0 != 0 or rc1 != 0 or len(a) != len(b) or not a:
            failures.append(f"oracle {name}: exits {rc0}/{rc1}, "
                            f"{len(a)}/{len(b)} numbers")
            continue
        for x, y in zip(a, b):
            if abs(x - y) > 1e-5 * max(1.0, abs(x)):
                failures.append(f"oracle {name}: {y} in the mode, {x} "
                                f"without it")
                break
    return failures


def explained(ss, folder):
    """`ss explain --json` names the chunk size, or with split H the dim
    whose heads run one at a time (docs/explain.md)."""
    import json
    heads = os.path.join(HERE, "..", "..", "conformance", "deterministic",
                         "split_heads_transformer.ss")
    failures = []
    for path, chunk, dim in ((CASE, 8, None), (heads, None, "H")):
        p = subprocess.run([ss, "explain", "--json", path, "--devices",
                            "cpu[0 1]"], cwd=folder, capture_output=True,
                           text=True)
        got = json.loads(p.stdout) if p.returncode == 0 else {}
        if (got.get("deterministic") is not True or
                got.get("chunk") != chunk or
                got.get("deterministic_heads") != dim):
            failures.append(f"explain --json {os.path.basename(path)}: "
                            f"deterministic/chunk/deterministic_heads "
                            f"{got.get('deterministic')}/{got.get('chunk')}/"
                            f"{got.get('deterministic_heads')}, want "
                            f"True/{chunk}/{dim}\n{p.stderr}")
    return failures


def kernels(hooks, folder):
    """Worker 2 says it computes with other kernels."""
    env = dict(os.environ, SHAPESCRIPT_TEST_KERNELS="2:OpenBLAS Other, AVX9")
    p = subprocess.run([hooks, "run", CASE, "--devices", "cpu[0 1 2]"],
                       cwd=folder, capture_output=True, text=True, env=env)
    want = ("ValueError: deterministic mode needs the same kernels on every "
            "device: device 0 computes with OpenBLAS ")
    if (p.returncode != 2 or want not in p.stderr or
            "device 2 with OpenBLAS Other, AVX9" not in p.stderr or
            not re.search(r"readme_mlp\.ss:\d+:\d+: ValueError", p.stderr) or
            os.path.exists(os.path.join(folder, "mlp.safetensors"))):
        return [f"kernels that differ were not refused before the first "
                f"step (exit {p.returncode}):\n{p.stderr}"]
    return []


def main():
    ss = os.path.abspath(sys.argv[1])
    hooks = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as folder:
        failures = control(ss, folder) + \
            resume(ss, folder, RESUME, "data parallel") + \
            resume(ss, folder, RESUME_HEADS, "split H") + \
            oracle(ss, folder) + explained(ss, folder) + \
            kernels(hooks, folder)
    for f in failures:
        print("FAIL: " + f)
    if failures:
        sys.exit(1)
    print("ok: the tolerance-0 comparison catches a run without the mode; "
          "checkpoints saved on 3 devices and resumed on 2 (data "
          "parallel; split H) write one device's bytes; devices of other "
          "kernels refuse to start")


if __name__ == "__main__":
    main()
