"""Torch rows of the optimizers and the gradient utilities: a few steps of
`update` against torch.optim, cosine_lr against its formula, norm(g) and
clip_norm against torch.nn.utils.clip_grad_norm_.

Each row is a whole small program (a model, a loss, a loop of steps) that
logs the params after every step; torch runs the same steps from the same
values. The loss, sum((w * v - t)^2) + sum(sin(w)), has gradients that
change from step to step and differ between params, so momentum, Adam's
moments and weight decay all matter.
"""

import math

import numpy as np
import torch

from ss_runner import compare, run_ss

STEPS = 4
# f64: 1e-10 as for every op (Note [Tolerances]); four steps add no more
# than a few roundings. f32: AdamW divides by sqrt(v) + eps, so a gradient's
# f32 rounding reaches the update at its own relative size (1e-7 each step);
# 1e-5 still holds.
RTOL = {"f64": 1e-10, "f32": 1e-5}

PROGRAM = """dim A = 3
dim B = 4

model P:
    w: [A B] {dt} = zeros()
    v: [B] {dt} = zeros()
    buffer t: [A B] {dt} = zeros()

fn loss(m: P) -> {dt}:
    return sum((m.w * m.v - m.t) ** 2.0) + sum(sin(m.w))

fn main():
    let m = load("in.safetensors", P)
    let opt = {make}
    let out = jsonl("out.jsonl")
    for i in range({steps}):
        let l, g = value_and_grad(loss, m)
{body}
        out.write(logs(w=m.w, v=m.v, loss=l, step=opt.step, lr=opt.lr{logs}))
"""


def torch_loss(w, v, t):
    return ((w * v - t) ** 2).sum() + torch.sin(w).sum()


def cosine(step, total, lr, warmup):
    """transformers' get_cosine_schedule_with_warmup, as a function."""
    if step < warmup:
        return lr * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return lr * max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


class OptimRow:
    """make: the optimizer's ShapeScript call; torch_opt(params): torch's.
    body: the loop's lines after value_and_grad (default: update);
    before_step(opt, i, params): what torch does before its step (set_lr,
    clipping), returning {name: value} logged by the body's `logs` extras."""

    def __init__(self, ops, label, make, torch_opt, body=None,
                 before_step=None, logs="", dtypes=("f64", "f32")):
        self.ops = tuple(ops)
        self.label, self.make, self.torch_opt = label, make, torch_opt
        self.body = body or ["update(m, opt, g)"]
        self.before_step, self.logs = before_step, logs
        self.dtypes, self.known_bug = dtypes, None

    def program(self, dtype):
        body = "\n".join("        " + line for line in self.body)
        return PROGRAM.format(dt=dtype, make=self.make, steps=STEPS,
                              body=body, logs=self.logs)

    def run(self, ss, dtype):
        rng = np.random.default_rng(len(self.label) * 7919 + 17)
        npdt = {"f64": np.float64, "f32": np.float32}[dtype]
        arrays = {"w": rng.uniform(-1, 1, (3, 4)).astype(npdt),
                  "v": rng.uniform(-1, 1, (4,)).astype(npdt),
                  "t": rng.uniform(-1, 1, (3, 4)).astype(npdt)}
        ran = run_ss(ss, self.program(dtype), arrays)
        if isinstance(ran, str):
            return [ran]
        lines = ran[0]
        if len(lines) != STEPS:
            return [f"{len(lines)} lines written, not {STEPS}"]
        w, v, t = (torch.from_numpy(np.array(arrays[k])).double()
                   for k in "wvt")
        w.requires_grad_(True)
        v.requires_grad_(True)
        opt = self.torch_opt([w, v])
        errs = []
        for i, got in enumerate(lines):
            opt.zero_grad()
            loss = torch_loss(w, v, t)
            loss.backward()
            want = {"loss": loss.detach()}
            if self.before_step:
                want.update(self.before_step(opt, i, [w, v]))
            want["lr"] = torch.tensor(opt.param_groups[0]["lr"],
                                      dtype=torch.float64)
            opt.step()
            want.update(w=w.detach(), v=v.detach(),
                        step=torch.tensor(i + 1, dtype=torch.int64))
            for name, value in want.items():
                e = compare(f"step {i} {name}", got[name], value,
                            RTOL[dtype])
                if e:
                    errs.append(e)
        return errs


def set_lr_cosine(opt, i, params):
    lr = cosine(i, STEPS, 0.05, 1)
    for group in opt.param_groups:
        group["lr"] = lr
    return {"sched": torch.tensor(lr, dtype=torch.float64)}


def clip(opt, i, params):
    norm = torch.nn.utils.clip_grad_norm_(params, 0.5)
    return {"norm": norm.detach()}


def total_norm(opt, i, params):
    return {"norm": torch.sqrt(sum((p.grad ** 2).sum() for p in params))}


SGD = torch.optim.SGD
ADAMW = torch.optim.AdamW
ROWS = [
    OptimRow(["sgd", "update"], "sgd lr", "sgd(m, lr=0.1)",
             lambda ps: SGD(ps, lr=0.1)),
    OptimRow(["sgd"], "sgd momentum", "sgd(m, lr=0.05, momentum=0.9)",
             lambda ps: SGD(ps, lr=0.05, momentum=0.9)),
    OptimRow(["sgd"], "sgd nesterov weight_decay",
             "sgd(m, lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=true)",
             lambda ps: SGD(ps, lr=0.05, momentum=0.8, weight_decay=0.1,
                            nesterov=True)),
    OptimRow(["sgd"], "sgd weight_decay", "sgd(m, lr=0.1, weight_decay=0.3)",
             lambda ps: SGD(ps, lr=0.1, weight_decay=0.3)),
    # torch's AdamW defaults but weight_decay: ShapeScript's is 0.01, as
    # torch's (library.md).
    OptimRow(["adamw"], "adamw defaults", "adamw(m, lr=0.01)",
             lambda ps: ADAMW(ps, lr=0.01)),
    OptimRow(["adamw"], "adamw betas eps weight_decay",
             "adamw(m, lr=0.02, betas=(0.8, 0.99), eps=1e-6, "
             "weight_decay=0.1)",
             lambda ps: ADAMW(ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6,
                              weight_decay=0.1)),
    OptimRow(["set_lr", "cosine_lr"], "set_lr cosine_lr warmup",
             "adamw(m, lr=0.05)", lambda ps: ADAMW(ps, lr=0.05),
             body=[f"let s = cosine_lr(i, {STEPS}, 0.05, warmup=1)",
                   "set_lr(opt, s)", "update(m, opt, g)"],
             before_step=set_lr_cosine, logs=", sched=s"),
    OptimRow(["clip_norm"], "clip_norm", "sgd(m, lr=0.1, momentum=0.5)",
             lambda ps: SGD(ps, lr=0.1, momentum=0.5),
             body=["let n = norm(g)", "update(m, opt, clip_norm(g, 0.5))"],
             before_step=clip, logs=", norm=n"),
    OptimRow(["norm"], "norm of grads", "sgd(m, lr=0.1)",
             lambda ps: SGD(ps, lr=0.1),
             body=["let n = norm(g)", "update(m, opt, g)"],
             before_step=total_norm, logs=", norm=n"),
]


class CosineRow:
    """cosine_lr at every step of two schedules, and past the end."""

    ops, label, dtypes, known_bug = ("cosine_lr",), "cosine_lr", ("f64",), None

    def run(self, ss, dtype):
        cases = [(s, 10, 0.3, 3) for s in range(11)]
        cases += [(s, 7, 1e-3, 0) for s in range(8)]
        calls = ", ".join(f"c{k}=cosine_lr({s}, {n}, {lr}, warmup={w})"
                          for k, (s, n, lr, w) in enumerate(cases))
        src = ('fn main():\n    jsonl("out.jsonl").write(logs(' + calls +
               "))\n")
        ran = run_ss(ss, src, {"unused": np.array(0.0)})
        if isinstance(ran, str):
            return [ran]
        got = ran[0][0]
        errs = []
        for k, case in enumerate(cases):
            e = compare(f"cosine_lr{case}", got[f"c{k}"],
                        torch.tensor(cosine(*case), dtype=torch.float64),
                        RTOL["f64"])
            if e:
                errs.append(e)
        return errs


ROWS.append(CosineRow())


def _torch_schedule(make, lr, steps):
    """The lr torch's scheduler [make](opt) gives after 0..steps-1 calls of
    sched.step()."""
    p = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([p], lr=lr)
    sched = make(opt)
    out = []
    for _ in range(steps):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


class ScheduleRow:
    """step_lr and linear_lr at every step of a schedule (and past its
    end), against torch.optim.lr_scheduler's StepLR and LinearLR stepped as
    a training loop steps them."""

    dtypes, known_bug = ("f64",), None

    def __init__(self, op, label, args, make, lr, steps):
        self.ops, self.label = (op,), label
        self.args, self.make, self.lr, self.steps = args, make, lr, steps

    def run(self, ss, dtype):
        op = self.ops[0]
        calls = ", ".join(f"c{s}={op}({s}, {self.lr}{self.args})"
                          for s in range(self.steps))
        src = ('fn main():\n    jsonl("out.jsonl").write(logs(' + calls +
               "))\n")
        ran = run_ss(ss, src, {"unused": np.array(0.0)})
        if isinstance(ran, str):
            return [ran]
        got = ran[0][0]
        want = _torch_schedule(self.make, self.lr, self.steps)
        errs = []
        for s in range(self.steps):
            e = compare(f"{self.label} at step {s}", got[f"c{s}"],
                        torch.tensor(want[s], dtype=torch.float64),
                        RTOL["f64"])
            if e:
                errs.append(e)
        return errs


SCHED = torch.optim.lr_scheduler
ROWS += [
    ScheduleRow("step_lr", "step_lr", ", 3", lambda o: SCHED.StepLR(o, 3),
                0.5, 10),
    ScheduleRow("step_lr", "step_lr gamma", ", 2, gamma=0.5",
                lambda o: SCHED.StepLR(o, 2, gamma=0.5), 0.1, 9),
    ScheduleRow("linear_lr", "linear_lr defaults", "",
                lambda o: SCHED.LinearLR(o), 0.3, 8),
    ScheduleRow("linear_lr", "linear_lr warm-up",
                ", start_factor=0.1, end_factor=1.0, total_iters=4",
                lambda o: SCHED.LinearLR(o, start_factor=0.1, end_factor=1.0,
                                         total_iters=4), 1e-3, 7),
    ScheduleRow("linear_lr", "linear_lr decay",
                ", start_factor=1.0, end_factor=0.25, total_iters=3",
                lambda o: SCHED.LinearLR(o, start_factor=1.0,
                                         end_factor=0.25, total_iters=3),
                0.2, 6),
]
