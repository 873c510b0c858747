"""The PyTorch side of each program in this folder: its data and init, and
the same training written in torch (functional ops on leaf tensors, and
torch.optim's optimizers), from the files the .ss program reads.

Each program is a Program: `make(rng)` gives the files to write (float
arrays in f64; compare.py casts them to the run's dtype), and
`train(folder, dt)` reads those files back, trains, and gives every step's
logs (the names the .ss program writes to log.jsonl) and, for each file the
program saves, the tensors under the names ss's `save` uses (library.md,
Checkpoints) and the metadata that file must hold.
"""
import contextlib
import math
import os
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import safetensors_io


def cosine(step, total, warmup=0):
    """transformers' get_cosine_schedule_with_warmup factor (num_cycles 0.5):
    linear warm-up, then cosine decay to 0."""
    if step < warmup:
        return step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress)))


def read(folder, name):
    """{name: torch tensor} of a safetensors file in [folder]."""
    tensors, _ = safetensors_io.read(os.path.join(folder, name))
    return {k: torch.from_numpy(v) for k, v in tensors.items()}


def leaves(init):
    return {k: v.clone().requires_grad_(True) for k, v in init.items()}


def batches(data, b):
    """ds.batches(b) without shuffle: consecutive slices, in order."""
    n = len(next(iter(data.values())))
    for i in range(0, n, b):
        yield {k: v[i:i + b] for k, v in data.items()}


def final(params, opt, states, buffers=None):
    """The checkpoint ss's save(path, m, opt) writes, from torch's tensors:
    params and buffers by path, optimizer state as opt.<state>.<path>."""
    out = {k: p.detach().numpy() for k, p in params.items()}
    out.update({k: b.numpy() for k, b in (buffers or {}).items()})
    for k, p in params.items():
        for s in states:
            out[f"opt.{s}.{k}"] = opt.state[p][s].numpy()
    return out


def adamw_metadata(opt, steps, lr):
    g = opt.param_groups[0]
    return {"optimizer": "adamw", "step": steps, "lr": lr,
            "weight_decay": g["weight_decay"], "eps": g["eps"],
            "betas": list(g["betas"])}


def sgd_metadata(opt, steps, lr):
    """[lr]: the last step's (a scheduler has moved torch's on since)."""
    g = opt.param_groups[0]
    return {"optimizer": "sgd", "step": steps, "lr": lr,
            "weight_decay": g["weight_decay"], "momentum": g["momentum"],
            "nesterov": g["nesterov"]}


def check_clipping(logs, clip):
    """The data must make clip_norm act on some steps and not on others,
    or the comparison would not test it."""
    clipped = sum(log["grad_norm"] > clip for log in logs)
    assert 0 < clipped < len(logs), \
        f"clip_norm({clip}) acts on {clipped} of {len(logs)} steps"


def uniform(rng, shape, fan_in):
    a = 1 / math.sqrt(fan_in)
    return rng.uniform(-a, a, shape)


def near(rng, shape, centre, spread):
    """Norm params away from 1 and 0, so a slip in the affine shows."""
    return centre + spread * rng.standard_normal(shape)


def teacher_labels(rng, x, classes):
    """Labels a model can learn: a noisy random linear teacher's argmax."""
    t = rng.standard_normal((x.shape[1], classes))
    s = x @ t + 0.5 * rng.standard_normal((len(x), classes))
    return np.argmax(s, axis=1).astype(np.int64)


def quadrant_images(rng, n, ci, side, classes):
    """[n] images [ci side side] and labels from their quadrant means:
    learnable by a small CNN (cnn.ss, resnet.ss)."""
    x = rng.standard_normal((n, ci, side, side))
    q = x.reshape(n, ci, 2, side // 2, 2, side // 2)
    return x, teacher_labels(rng, q.mean(axis=(3, 5)).reshape(n, -1), classes)


class Mlp:
    """mlp.ss: Linear, layer_norm (affine), gelu, Linear; AdamW, clip_norm,
    warm-up + cosine lr through set_lr."""
    source, model = "mlp.ss", "Mlp"
    D, H, C, B, STEPS, WARMUP = 16, 32, 4, 16, 40, 5
    LR, CLIP = 0.02, 1.0

    def make(self, rng):
        x = rng.standard_normal((self.STEPS * self.B, self.D))
        D, H, C = self.D, self.H, self.C
        init = {"l1.w": uniform(rng, (D, H), D), "l1.b": uniform(rng, H, D),
                "norm.g": near(rng, H, 1, 0.2), "norm.b": near(rng, H, 0, 0.2),
                "l2.w": uniform(rng, (H, C), H), "l2.b": uniform(rng, C, H)}
        return {"data.safetensors": {"x": x, "y": teacher_labels(rng, x, C)},
                "init.safetensors": init}

    def autocast(self):
        return contextlib.nullcontext()

    def loss(self, p, batch):
        h = F.layer_norm(batch["x"] @ p["l1.w"] + p["l1.b"], (self.H,),
                         p["norm.g"], p["norm.b"], eps=1e-5)
        logits = F.gelu(h) @ p["l2.w"] + p["l2.b"]
        return F.cross_entropy(logits, batch["y"])

    def train(self, folder, dt):
        data = read(folder, "data.safetensors")
        p = leaves(read(folder, "init.safetensors"))
        opt = torch.optim.AdamW(p.values(), lr=self.LR, betas=(0.9, 0.99),
                                weight_decay=0.05)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: cosine(s, self.STEPS, self.WARMUP))
        logs = []
        for batch in batches(data, self.B):
            with self.autocast():
                loss = self.loss(p, batch)
            opt.zero_grad()
            loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(p.values(), self.CLIP)
            logs.append({"loss": loss.item(), "grad_norm": gn.item(),
                         "lr": opt.param_groups[0]["lr"]})
            opt.step()
            sched.step()
        check_clipping(logs, self.CLIP)
        return logs, {"final.safetensors": (
            final(p, opt, ["exp_avg", "exp_avg_sq"]),
            adamw_metadata(opt, len(logs), logs[-1].get("lr", self.LR)))}


class MlpAutocast(Mlp):
    """mlp_autocast.ss: Mlp without layer_norm (torch 1.13 refuses a bf16
    layer_norm with f32 weights), its loss under torch.autocast("cpu",
    dtype=torch.bfloat16); f32 master weights. Linear layers as F.linear:
    one addmm, bias included, in bf16, as ss's linear under autocast.

    Note [bf16 tolerances]: bf16 keeps 8 bits, so one unit is 2**-8 =
    3.9e-3 of a value. ss rounds each bf16 op's f32 result once; torch 1.13
    on this CPU (no bf16 BLAS) accumulates small bf16 products with
    roundings in between, so from the first step single elements are a unit
    or two apart, and 50 steps of AdamW carry that to 2.2e-2 of a param
    (gpt_autocast's w_qkv; mlp_autocast's 5.7e-3). 5e-2 is 13 units: a whole
    training run in bf16 against torch's. It cannot tell an op run in bf16
    from one run in f32 (an f32 run is 3.7e-2 from torch's autocast run);
    tests/torch/autocast_oracle.py checks each op's dtype and rounding, one
    step against torch computing it op by op, to the bit."""
    source = "mlp_autocast.ss"
    STEPS = 50
    TOLERANCE = {"f32": 5e-2}  # Note [bf16 tolerances]

    def make(self, rng):
        files = super().make(rng)
        for k in ("norm.g", "norm.b"):
            del files["init.safetensors"][k]
        return files

    def autocast(self):
        return torch.autocast("cpu", dtype=torch.bfloat16)

    def loss(self, p, batch):
        h = F.gelu(F.linear(batch["x"], p["l1.w"].T, p["l1.b"]))
        logits = F.linear(h, p["l2.w"].T, p["l2.b"])
        return F.cross_entropy(logits, batch["y"])


def r16(t):
    """[t] rounded to f16 and kept f32 (through autograd, its gradient is
    rounded the same way: the VJP of a cast)."""
    return t.half().float()


def linear16(x, w, b):
    """ss's linear(l, x) in f16: x @ w + b summed in f32 from f16 values,
    rounded once (Note [A half linear rounds once] in ops/defs/nn.cpp)."""
    return r16(F.linear(r16(x), r16(w).T, r16(b)))


class GradScaler:
    """torch.cuda.amp.GradScaler written out, as its kernels compute it
    (torch 1.13 runs _amp_foreach_non_finite_check_and_unscale_ and
    _amp_update_scale_ on CUDA only, and its GradScaler disables itself
    without CUDA): an f32 scale; unscale_ multiplies each gradient by the
    scale's reciprocal, taken in f64 and rounded to f32, and notes an inf
    or a nan; update backs off at once on such a step and grows after
    growth_interval good steps in a row, keeping the old scale when the
    grown one is not finite."""

    def __init__(self, init_scale, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.scale = torch.tensor(init_scale, dtype=torch.float32)
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.growth_interval, self.tracker = growth_interval, 0

    def unscale_(self, params):
        inv = self.scale.double().reciprocal().float()
        found = False
        for q in params:
            found = found or not bool(torch.isfinite(q.grad).all())
            q.grad.mul_(inv)
        return found

    def update(self, found_inf):
        if found_inf:
            self.scale = self.scale * self.backoff_factor
            self.tracker = 0
        elif self.tracker + 1 == self.growth_interval:
            grown = self.scale * self.growth_factor
            if torch.isfinite(grown):
                self.scale = grown
            self.tracker = 0
        else:
            self.tracker += 1

    def metadata(self):
        """scaler.state_dict() as ss's checkpoint metadata writes it."""
        def num(x):
            return str(int(x)) if float(x).is_integer() else repr(float(x))
        return {"grad_scaler.scale": num(self.scale.item()),
                "grad_scaler.growth_factor": num(self.growth_factor),
                "grad_scaler.backoff_factor": num(self.backoff_factor),
                "grad_scaler.growth_interval": str(self.growth_interval),
                "grad_scaler._growth_tracker": str(self.tracker)}


class MlpF16(MlpAutocast):
    """mlp_autocast.ss rewritten to train in f16 mixed precision with a
    grad scaler (Note [Loss scaling] in interp/builtins/grad_scaler.cpp):
    value_and_grad(autocast(loss, f16), m, batch, scaler=opt) with opt =
    grad_scaler(adamw(...), init_scale=2**20, growth_interval=3), so the
    first steps overflow and later ones grow the scale; each step logs the
    scale (grad_norm is inf on a skipped step). torch 1.13 on CPU has
    neither f16 autocast nor GradScaler, so the oracle is
    written out: each op that autocast runs in f16 takes r16() of its
    operands and gives r16() of its f32 result, as autocast_oracle.py does
    for bf16; the loss is multiplied by the scale before backward(); the
    scaler is GradScaler above; AdamW and clip_grad_norm_ are torch's, and
    a step whose gradients overflowed is not taken.

    On N devices (compare.py sets ranks) each device runs its backward on
    its share of the batch (ops/core/batch_split.h), so each share's f16
    weight gradients are rounded, and overflow, apart before the f32 sum:
    the oracle takes each share's loss as a separate graph, as each device
    does, summed over the batch / B.

    Note [f16 tolerances]: f16 keeps 11 bits, one unit is 2**-11 = 4.9e-4
    of a value. ss and torch sum the f32 products in other orders, so now
    and then an element rounds to the other f16 neighbour, and 50 AdamW
    steps carry it on: 1e-2 is 20 units. The scale is a power of two that
    the skipped steps set: a step skipped on one side only moves it by a
    factor of 2, far outside the tolerance, and every step logs it."""
    GROWTH, INIT_SCALE = 3, 2.0 ** 20
    TOLERANCE = {"f32": 1e-2}  # Note [f16 tolerances]
    ranks = 1

    def rewrite(self, src):
        edits = [
            ("value_and_grad(autocast(loss, bf16), m, batch)",
             "value_and_grad(autocast(loss, f16), m, batch, scaler=opt)"),
            ("logs(loss=l, grad_norm=gn)", "logs(loss=l, scale=opt.loss_scale)"),
            ("logs(loss=r.loss, grad_norm=r.grad_norm, lr=lr)",
             "logs(loss=r.loss, scale=r.scale, lr=lr)"),
            ("let opt = adamw(m, lr=0.02, betas=(0.9, 0.99), weight_decay=0.05)",
             "let opt = grad_scaler(adamw(m, lr=0.02, betas=(0.9, 0.99), "
             f"weight_decay=0.05), init_scale={self.INIT_SCALE}, "
             f"growth_interval={self.GROWTH})")]
        for old, new in edits:
            assert src.count(old) == 1, f"mlp_autocast.ss has no {old!r}"
            src = src.replace(old, new)
        return src

    def loss_sum(self, p, batch):
        h = r16(F.gelu(linear16(batch["x"], p["l1.w"], p["l1.b"])))
        logits = linear16(h, p["l2.w"], p["l2.b"])
        return F.cross_entropy(logits, batch["y"], reduction="sum")

    def train(self, folder, dt):
        data = read(folder, "data.safetensors")
        p = leaves(read(folder, "init.safetensors"))
        opt = torch.optim.AdamW(p.values(), lr=self.LR, betas=(0.9, 0.99),
                                weight_decay=0.05)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: cosine(s, self.STEPS, self.WARMUP))
        scaler = GradScaler(self.INIT_SCALE, growth_interval=self.GROWTH)
        logs, taken = [], 0
        for batch in batches(data, self.B):
            n = len(batch["y"])
            start, loss = 0, 0.0
            for rows in [n // self.ranks + (i < n % self.ranks)
                         for i in range(self.ranks)]:
                share = {k: v[start:start + rows] for k, v in batch.items()}
                start += rows
                loss = loss + self.loss_sum(p, share) / n
            opt.zero_grad()
            (loss * scaler.scale).backward()
            found = scaler.unscale_(p.values())
            torch.nn.utils.clip_grad_norm_(p.values(), self.CLIP)
            lr = opt.param_groups[0]["lr"]
            if not found:
                opt.step()
                taken += 1
            scaler.update(found)
            logs.append({"loss": loss.item(), "scale": scaler.scale.item(),
                         "lr": lr})
            with warnings.catch_warnings():
                # After a skipped step torch warns that the scheduler
                # stepped before the optimizer: GradScaler's runs do too.
                warnings.simplefilter("ignore", UserWarning)
                sched.step()
        # The data must make the scaler skip steps and grow the scale, or
        # the comparison would not test it.
        grew = sum(b["scale"] > a["scale"] for a, b in zip(logs, logs[1:]))
        assert 0 < taken < len(logs) and grew > 0, \
            f"the scaler skipped {len(logs) - taken} steps and grew {grew}"
        meta = adamw_metadata(opt, taken, lr)
        meta.update(scaler.metadata())
        return logs, {"final.safetensors": (
            final(p, opt, ["exp_avg", "exp_avg_sq"]), meta)}


class Cnn:
    """cnn.ss: conv2d, batch_norm in Train and, on the held-out
    batch after every step, in Eval; relu, max_pool2d, a linear head; SGD
    with momentum, nesterov, weight decay, cosine lr through set_lr."""
    source, model = "cnn.ss", "Cnn"
    Ci, S, Co, C, B, STEPS = 2, 8, 4, 3, 16, 40
    LR = 0.1

    def make(self, rng):
        n = self.STEPS * self.B
        x, y = quadrant_images(rng, n + 2 * self.B, self.Ci, self.S, self.C)
        Co, Ci, C = self.Co, self.Ci, self.C
        init = {"k": 0.3 * rng.standard_normal((Co, Ci, 3, 3)),
                "bn.g": near(rng, Co, 1, 0.2), "bn.b": near(rng, Co, 0, 0.2),
                "bn.running_mean": near(rng, Co, 0, 0.1),
                "bn.running_var": near(rng, Co, 1, 0.1),
                "w": 0.1 * rng.standard_normal((Co * 16, C)),
                "b": 0.1 * rng.standard_normal(C)}
        return {"data.safetensors": {"img": x[:n], "label": y[:n]},
                "test.safetensors": {"img": x[n:], "label": y[n:]},
                "init.safetensors": init}

    def train(self, folder, dt):
        data, test = read(folder, "data.safetensors"), read(folder, "test.safetensors")
        init = read(folder, "init.safetensors")
        bufs = {k: init.pop(k) for k in ("bn.running_mean", "bn.running_var")}
        p = leaves(init)

        def forward(x, training):
            h = F.conv2d(x, p["k"], padding=1)
            h = F.batch_norm(h, bufs["bn.running_mean"], bufs["bn.running_var"],
                             p["bn.g"], p["bn.b"], training=training,
                             momentum=0.1, eps=1e-5)
            return F.max_pool2d(F.relu(h), 2).flatten(1) @ p["w"] + p["b"]

        opt = torch.optim.SGD(p.values(), lr=self.LR, momentum=0.9,
                              weight_decay=1e-3, nesterov=True)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: cosine(s, self.STEPS))
        logs = []
        for batch in batches(data, self.B):
            loss = F.cross_entropy(forward(batch["img"], True), batch["label"])
            opt.zero_grad()
            loss.backward()
            gn = torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(q.grad) for q in p.values()]))
            lr = opt.param_groups[0]["lr"]
            opt.step()
            sched.step()
            with torch.no_grad():
                ev = F.cross_entropy(forward(test["img"], False), test["label"])
            logs.append({"loss": loss.item(), "grad_norm": gn.item(), "lr": lr,
                         "eval_loss": ev.item()})
        return logs, {"final.safetensors": (
            final(p, opt, ["momentum_buffer"], bufs),
            sgd_metadata(opt, len(logs), logs[-1]["lr"]))}


class LstmLm:
    """lstm_lm.ss: pytorch/examples' word language model, small: embedding,
    an LSTM cell written out (gates i, f, g, o as torch.nn.LSTM), a linear
    decoder; truncated backprop through time over chunks of K steps of each
    batch's B streams, the state detached between chunks (the example's
    repackage_hidden) and zero for each batch; SGD with momentum and
    clip_grad_norm_."""
    source, model = "lstm_lm.ss", "Lm"
    V, N, K, E, H, B, BATCHES = 12, 24, 6, 8, 10, 6, 3
    LR, CLIP = 0.5, 0.25

    def make(self, rng):
        V, E, H = self.V, self.E, self.H
        n = self.B * self.BATCHES
        trans = rng.dirichlet(np.full(V, 0.3), size=V)
        s = np.zeros((n, self.N + 1), dtype=np.int64)
        s[:, 0] = rng.integers(0, V, n)
        for t in range(self.N):
            u = rng.random(n)[:, None]
            s[:, t + 1] = (np.cumsum(trans[s[:, t]], axis=1) < u).sum(axis=1)
        s = np.minimum(s, V - 1)
        init = {"embed.table": rng.standard_normal((V, E)),
                "lstm.wx": 0.3 * rng.standard_normal((E, 4 * H)),
                "lstm.wh": 0.3 * rng.standard_normal((H, 4 * H)),
                "lstm.b": 0.1 * rng.standard_normal(4 * H),
                "head.w": uniform(rng, (H, V), H), "head.b": uniform(rng, V, H)}
        return {"data.safetensors": {"tokens": s[:, :-1], "targets": s[:, 1:]},
                "init.safetensors": init}

    def train(self, folder, dt):
        data = read(folder, "data.safetensors")
        p = leaves(read(folder, "init.safetensors"))
        opt = torch.optim.SGD(p.values(), lr=self.LR, momentum=0.9)
        H, K = self.H, self.K
        logs = []
        for batch in batches(data, self.B):
            h = torch.zeros(self.B, H)
            c = torch.zeros(self.B, H)
            for i in range(self.N // K):
                tok = batch["tokens"][:, i * K:(i + 1) * K]
                y = batch["targets"][:, i * K:(i + 1) * K]
                x = p["embed.table"][tok]
                loss = 0
                for t in range(K):
                    z = x[:, t] @ p["lstm.wx"] + h @ p["lstm.wh"] + p["lstm.b"]
                    gi, gf, gg, go = z.split(H, dim=1)
                    c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
                    h = torch.sigmoid(go) * torch.tanh(c)
                    logits = h @ p["head.w"] + p["head.b"]
                    loss = loss + F.cross_entropy(logits, y[:, t])
                loss = loss / K
                opt.zero_grad()
                loss.backward()
                gn = torch.nn.utils.clip_grad_norm_(p.values(), self.CLIP)
                logs.append({"loss": loss.item(), "grad_norm": gn.item()})
                opt.step()
                h, c = h.detach(), c.detach()
        check_clipping(logs, self.CLIP)
        return logs, {"final.safetensors": (
            final(p, opt, ["momentum_buffer"]),
            sgd_metadata(opt, len(logs), self.LR))}


class ResNet:
    """resnet.ss: a stem conv and batch_norm, a depthwise conv
    with bias in a residual branch, a downsampling basic block (3x3 stride
    2, 3x3, each with batch_norm) added to a strided 1x1 shortcut with
    bias, adaptive_avg_pool2d to 1x1, a Linear head; SGD with momentum;
    batch_norm in Train, and in Eval on the held-out batch after every
    step."""
    source, model = "resnet.ss", "Net"
    Ci, S, C1, C2, K, B, STEPS = 3, 8, 4, 8, 3, 16, 30
    LR = 0.05
    BNS = ("bn0", "bn1", "bn2")

    def make(self, rng):
        n = self.STEPS * self.B
        x, y = quadrant_images(rng, n + 2 * self.B, self.Ci, self.S, self.K)
        Ci, C1, C2, K = self.Ci, self.C1, self.C2, self.K
        init = {"stem": 0.3 * rng.standard_normal((C1, Ci, 3, 3)),
                "dw": 0.3 * rng.standard_normal((C1, 1, 3, 3)),
                "dw_b": 0.1 * rng.standard_normal(C1),
                "c1": 0.3 * rng.standard_normal((C2, C1, 3, 3)),
                "c2": 0.2 * rng.standard_normal((C2, C2, 3, 3)),
                "short": 0.3 * rng.standard_normal((C2, C1, 1, 1)),
                "short_b": 0.1 * rng.standard_normal(C2),
                "head.w": uniform(rng, (C2, K), C2),
                "head.b": uniform(rng, K, C2)}
        for bn, c in zip(self.BNS, (C1, C2, C2)):
            init[bn + ".g"] = near(rng, c, 1, 0.2)
            init[bn + ".b"] = near(rng, c, 0, 0.2)
            init[bn + ".running_mean"] = near(rng, c, 0, 0.1)
            init[bn + ".running_var"] = near(rng, c, 1, 0.1)
        return {"data.safetensors": {"img": x[:n], "label": y[:n]},
                "test.safetensors": {"img": x[n:], "label": y[n:]},
                "init.safetensors": init}

    def train(self, folder, dt):
        data, test = read(folder, "data.safetensors"), read(folder, "test.safetensors")
        init = read(folder, "init.safetensors")
        bufs = {k: init.pop(k) for k in list(init)
                if k.endswith(".running_mean") or k.endswith(".running_var")}
        p = leaves(init)

        def bn(h, name, training):
            return F.batch_norm(h, bufs[name + ".running_mean"],
                                bufs[name + ".running_var"], p[name + ".g"],
                                p[name + ".b"], training=training,
                                momentum=0.1, eps=1e-5)

        def forward(x, training):
            h = F.relu(bn(F.conv2d(x, p["stem"], padding=1),
                          "bn0", training))
            h = h + F.relu(F.conv2d(h, p["dw"], p["dw_b"], padding=1,
                                    groups=self.C1))
            y = F.relu(bn(F.conv2d(h, p["c1"], stride=2, padding=1), "bn1",
                          training))
            y = bn(F.conv2d(y, p["c2"], padding=1), "bn2", training)
            out = F.relu(y + F.conv2d(h, p["short"], p["short_b"], stride=2))
            pooled = F.adaptive_avg_pool2d(out, 1).flatten(1)
            return pooled @ p["head.w"] + p["head.b"]

        opt = torch.optim.SGD(p.values(), lr=self.LR, momentum=0.9)
        logs = []
        for batch in batches(data, self.B):
            loss = F.cross_entropy(forward(batch["img"], True), batch["label"])
            opt.zero_grad()
            loss.backward()
            gn = torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(q.grad) for q in p.values()]))
            opt.step()
            with torch.no_grad():
                ev = F.cross_entropy(forward(test["img"], False), test["label"])
            logs.append({"loss": loss.item(), "grad_norm": gn.item(),
                         "eval_loss": ev.item()})
        return logs, {"final.safetensors": (
            final(p, opt, ["momentum_buffer"], bufs),
            sgd_metadata(opt, len(logs), self.LR))}


def split_heads(x, h):
    """[b n (3 H Dh)] -> three [b H n Dh], H outer in the group."""
    b, n, _ = x.shape
    return x.view(b, n, 3, h, -1).permute(2, 0, 3, 1, 4).unbind(0)


class Gpt:
    """gpt.ss: embedding + positions, a pre-norm causal attention block with
    a gelu MLP, a final layer_norm and head, cross_entropy over [b n V];
    AdamW with clip_norm."""
    source, model = "gpt.ss", "Gpt"
    V, T, D, H, F, B, STEPS = 16, 8, 16, 2, 32, 8, 40
    LR, CLIP = 0.01, 1.0

    def make(self, rng):
        # Sequences of a random Markov chain: the next token is learnable.
        V, T, D, Fw = self.V, self.T, self.D, self.F
        n = self.STEPS * self.B
        trans = rng.dirichlet(np.full(V, 0.3), size=V)
        s = np.zeros((n, T + 1), dtype=np.int64)
        s[:, 0] = rng.integers(0, V, n)
        for t in range(T):
            u = rng.random(n)[:, None]
            s[:, t + 1] = (np.cumsum(trans[s[:, t]], axis=1) < u).sum(axis=1)
        s = np.minimum(s, V - 1)
        init = {"embed.table": rng.standard_normal((V, D)),
                "pos": 0.1 * rng.standard_normal((T, D)),
                "head": 0.3 * rng.standard_normal((D, V)),
                "blk.w_qkv": 0.3 * rng.standard_normal((D, 3 * D)),
                "blk.w_o": 0.2 * rng.standard_normal((D, D)),
                "blk.up.w": uniform(rng, (D, Fw), D), "blk.up.b": uniform(rng, Fw, D),
                "blk.down.w": uniform(rng, (Fw, D), Fw),
                "blk.down.b": uniform(rng, D, Fw)}
        for ln in ("blk.ln1", "blk.ln2", "ln_f"):
            init[ln + ".g"] = near(rng, D, 1, 0.2)
            init[ln + ".b"] = near(rng, D, 0, 0.2)
        return {"data.safetensors": {"tokens": s[:, :T], "targets": s[:, 1:]},
                "init.safetensors": init}

    def attention(self, p, x, mask):
        q, k, v = split_heads(x @ p["blk.w_qkv"], self.H)
        s = torch.einsum("bhnd,bhtd->bhnt", q, k) / math.sqrt(self.D // self.H)
        a = torch.softmax(s.masked_fill(~mask, -math.inf), dim=-1)
        o = (a @ v).permute(0, 2, 1, 3).flatten(2)
        return o @ p["blk.w_o"]

    def autocast(self):
        return contextlib.nullcontext()

    def ln(self, p, x, name):
        return F.layer_norm(x, (self.D,), p[name + ".g"], p[name + ".b"],
                            eps=1e-5)

    def mlp(self, p, x):
        u = F.gelu(x @ p["blk.up.w"] + p["blk.up.b"])
        return u @ p["blk.down.w"] + p["blk.down.b"]

    def forward(self, p, tokens, mask):
        x = p["embed.table"][tokens] + p["pos"]
        h = x + self.attention(p, self.ln(p, x, "blk.ln1"), mask)
        h = h + self.mlp(p, self.ln(p, h, "blk.ln2"))
        return self.ln(p, h, "ln_f") @ p["head"]

    def train(self, folder, dt):
        data = read(folder, "data.safetensors")
        p = leaves(read(folder, "init.safetensors"))
        D, T = self.D, self.T
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))

        opt = torch.optim.AdamW(p.values(), lr=self.LR, betas=(0.9, 0.95),
                                weight_decay=0.1)
        logs = []
        for batch in batches(data, self.B):
            with self.autocast():
                logits = self.forward(p, batch["tokens"], mask)
                loss = F.cross_entropy(logits.reshape(-1, self.V),
                                       batch["targets"].reshape(-1))
            opt.zero_grad()
            loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(p.values(), self.CLIP)
            logs.append({"loss": loss.item(), "grad_norm": gn.item()})
            opt.step()
        check_clipping(logs, self.CLIP)
        return logs, {"final.safetensors": (
            final(p, opt, ["exp_avg", "exp_avg_sq"]),
            adamw_metadata(opt, len(logs), logs[-1].get("lr", self.LR)))}


class GptAutocast(Gpt):
    """gpt.ss (einsum products) trained with its loss under
    autocast(loss, bf16) beside torch.autocast("cpu", dtype=torch.bfloat16)
    (Note [Autocast] in interp/eval/autocast.cpp): the q/k/v product, both
    einsums, the output projection, the MLP's Linear layers and the head in
    bf16, softmax and gelu in bf16 on bf16 inputs, the residual stream, the
    layer_norms and cross_entropy in f32; params and AdamW's state f32. The
    MLP's Linear layers as F.linear (one addmm, bias included, in bf16, as
    ss's linear under autocast). f32 only (Note [bf16 tolerances])."""
    STEPS = 50
    TOLERANCE = {"f32": 5e-2}  # Note [bf16 tolerances]

    def rewrite(self, src):
        return src.replace("value_and_grad(loss, m, batch)",
                           "value_and_grad(autocast(loss, bf16), m, batch)")

    def autocast(self):
        return torch.autocast("cpu", dtype=torch.bfloat16)

    def mlp(self, p, x):
        u = F.gelu(F.linear(x, p["blk.up.w"].T, p["blk.up.b"]))
        return F.linear(u, p["blk.down.w"].T, p["blk.down.b"])


class GptGroups(Gpt):
    """gpt.ss trained as nanoGPT's configure_optimizers and train loop do:
    AdamW with a no-decay param group (the embeddings, positions, norms
    and biases; weight decay on the matrices only), gradient accumulation
    over two batches a step (each batch's gradient, whole on any device
    count, summed in the controller at half weight), and padded targets:
    about a fifth of them -100, which cross_entropy ignores (its mean is
    over the others, so it counts them on each device too)."""
    STEPS = 40
    TAIL = """fn grads(m: Gpt, batch: [b] Sequence) -> (f64, Grads[Gpt]):
    return value_and_grad(loss, m, batch)

fn apply(mut m: Gpt, mut opt: AdamW[Gpt], g: Grads[Gpt]) -> f64:
    let gn = norm(g)
    update(m, opt, clip_norm(g, 1.0))
    return gn

fn main():
    let ds = dataset(Sequence, "data.safetensors")
    let m = load("init.safetensors", Gpt)
    let opt = adamw(m, lr=0.01, betas=(0.9, 0.95), weight_decay=0.1)
    add_param_group(opt, "no_decay", ["embed", "pos", "blk.ln1", "blk.ln2", "ln_f", "blk.up.b", "blk.down.b"], weight_decay=0.0)
    let out = jsonl("log.jsonl")
    let acc = zeros_like(m)
    let k = 0
    for batch in ds.batches(B):
        let l, g = grads(m, batch)
        acc = acc + g * 0.5
        k += 1
        if k % 2 == 1:
            out.write(logs(loss=l))
        else:
            out.write(logs(loss=l, grad_norm=apply(m, opt, acc)))
            acc = zeros_like(m)
    save("final.safetensors", m, opt)
"""
    NO_DECAY = ["embed.table", "pos", "blk.ln1.g", "blk.ln1.b", "blk.ln2.g",
                "blk.ln2.b", "ln_f.g", "ln_f.b", "blk.up.b", "blk.down.b"]

    def rewrite(self, src):
        src = src.replace("targets: [T] i64 in 0..V", "targets: [T] i64 in -100..V")
        return src[:src.index("fn train_step")] + self.TAIL

    def make(self, rng):
        files = super().make(rng)
        t = files["data.safetensors"]["targets"].copy()  # a view of tokens'
        t[rng.random(t.shape) < 0.2] = -100
        files["data.safetensors"]["targets"] = t
        return files

    def train(self, folder, dt):
        data = read(folder, "data.safetensors")
        p = leaves(read(folder, "init.safetensors"))
        mask = torch.tril(torch.ones(self.T, self.T, dtype=torch.bool))
        decay = [q for k, q in p.items() if k not in self.NO_DECAY]
        opt = torch.optim.AdamW(
            [{"params": decay},
             {"params": [p[k] for k in self.NO_DECAY], "weight_decay": 0.0}],
            lr=self.LR, betas=(0.9, 0.95), weight_decay=0.1)
        logs = []
        opt.zero_grad()
        for i, batch in enumerate(batches(data, self.B)):
            logits = self.forward(p, batch["tokens"], mask)
            loss = F.cross_entropy(logits.reshape(-1, self.V),
                                   batch["targets"].reshape(-1))
            (loss * 0.5).backward()
            logs.append({"loss": loss.item()})
            if i % 2 == 1:
                gn = torch.nn.utils.clip_grad_norm_(p.values(), self.CLIP)
                logs[-1]["grad_norm"] = gn.item()
                opt.step()
                opt.zero_grad()
        meta = adamw_metadata(opt, self.STEPS // 2, self.LR)
        meta.update({"group0.name": "no_decay", "group0.weight_decay": 0})
        return logs, {"final.safetensors": (
            final(p, opt, ["exp_avg", "exp_avg_sq"]), meta)}


class GptHeads(Gpt):
    """gpt_heads.ss: gpt.ss with q, v and o as Linear layers (x @ w + b,
    w: [in out]), k a plain param, and H = 4."""
    source = "gpt_heads.ss"
    H = 4

    def make(self, rng):
        files = super().make(rng)
        init = files["init.safetensors"]
        D = self.D
        del init["blk.w_qkv"], init["blk.w_o"]
        for name in ("q", "v", "o"):
            init[f"blk.{name}.w"] = 0.3 * rng.standard_normal((D, D))
            init[f"blk.{name}.b"] = 0.1 * rng.standard_normal(D)
        init["blk.w_k"] = 0.3 * rng.standard_normal((D, D))
        return files

    def attention(self, p, x, mask):
        def heads(t):
            b, n, _ = t.shape
            return t.view(b, n, self.H, -1).permute(0, 2, 1, 3)

        def linear(name, t):
            return t @ p[name + ".w"] + p[name + ".b"]

        q, v = heads(linear("blk.q", x)), heads(linear("blk.v", x))
        k = heads(x @ p["blk.w_k"])
        s = torch.einsum("bhnd,bhtd->bhnt", q, k) / math.sqrt(self.D // self.H)
        a = torch.softmax(s.masked_fill(~mask, -math.inf), dim=-1)
        o = (a @ v).permute(0, 2, 1, 3).flatten(2)
        return linear("blk.o", o)


class Resume:
    """resume.ss: torch trains PRE steps of two copies of a model, one with
    SGD and one with AdamW, and writes each as a checkpoint with the names
    ss uses; ss loads them with their optimizers, trains the remaining
    steps and saves; torch trains on from its own state, to compare."""
    source, model = "resume.ss", "Mlp"
    D, H, C, B, TOTAL, PRE = 16, 24, 5, 16, 40, 5
    # Hyperparameters away from the defaults: ss learns them from the files.
    OPTIMIZERS = {
        "sgd": (0.2, lambda ps, lr: torch.optim.SGD(
            ps, lr=lr, momentum=0.9, weight_decay=1e-3), ["momentum_buffer"]),
        "adamw": (0.01, lambda ps, lr: torch.optim.AdamW(
            ps, lr=lr, betas=(0.8, 0.99), eps=1e-7, weight_decay=0.02),
            ["exp_avg", "exp_avg_sq"]),
    }

    def make(self, rng):
        x = rng.standard_normal((self.TOTAL * self.B, self.D))
        D, H, C = self.D, self.H, self.C
        self.init = {"l1.w": uniform(rng, (D, H), D), "l1.b": uniform(rng, H, D),
                     "l2.w": uniform(rng, (H, C), H), "l2.b": uniform(rng, C, H)}
        cut = self.PRE * self.B
        y = teacher_labels(rng, x, C)
        self.pre = {"x": x[:cut], "y": y[:cut]}
        # The checkpoints are written by prepare(), in the run's dtype.
        return {"data.safetensors": {"x": x[cut:], "y": y[cut:]}}

    def _steps(self, name, p, opt, data, first):
        logs = []
        for i, batch in enumerate(batches(data, self.B)):
            lr = self.OPTIMIZERS[name][0] * cosine(first + i, self.TOTAL)
            for g in opt.param_groups:
                g["lr"] = lr
            h = torch.tanh(batch["x"] @ p["l1.w"] + p["l1.b"])
            loss = F.cross_entropy(h @ p["l2.w"] + p["l2.b"], batch["y"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            logs.append({f"{name}_loss": loss.item(), f"{name}_lr": lr})
        return logs

    def _start(self, name, dt):
        """Torch's first PRE steps with optimizer [name]."""
        base, make_opt, _ = self.OPTIMIZERS[name]
        p = leaves({k: torch.from_numpy(v.astype(dt)) for k, v in self.init.items()})
        opt = make_opt(p.values(), base)
        pre = {k: torch.from_numpy(v.astype(dt) if v.dtype.kind == "f" else v)
               for k, v in self.pre.items()}
        self._steps(name, p, opt, pre, 0)
        return p, opt

    def _checkpoint(self, name, p, opt, steps):
        metadata = adamw_metadata if name == "adamw" else sgd_metadata
        return (final(p, opt, self.OPTIMIZERS[name][2]),
                metadata(opt, steps, opt.param_groups[0]["lr"]))

    def prepare(self, folder, dt):
        """Each optimizer's PRE steps, saved as ss's save(path, m, opt)
        would."""
        for name in self.OPTIMIZERS:
            p, opt = self._start(name, dt)
            tensors, meta = self._checkpoint(name, p, opt, self.PRE)
            meta.update(format="shapescript", model=self.model)
            safetensors_io.write(
                os.path.join(folder, f"resume_{name}.safetensors"),
                tensors, metadata=metadata_text(meta))

    # The first PRE steps in ss (compare.py --pre-devices): resume.ss's
    # model and steps with this main, from the init torch starts from.
    PRE_MAIN = """fn main():
    let m1 = load("init.safetensors", Mlp)
    let o1 = sgd(m1, lr=0.2, momentum=0.9, weight_decay=1e-3)
    let m2 = load("init.safetensors", Mlp)
    let o2 = adamw(m2, lr=0.01, betas=(0.8, 0.99), eps=1e-7, weight_decay=0.02)
    for batch in dataset(Example, "pre.safetensors").batches(B):
        set_lr(o1, cosine_lr(o1.step, TOTAL, 0.2))
        set_lr(o2, cosine_lr(o2.step, TOTAL, 0.01))
        sgd_step(m1, o1, batch)
        adamw_step(m2, o2, batch)
    save("resume_sgd.safetensors", m1, o1)
    save("resume_adamw.safetensors", m2, o2)
"""

    def prepare_in_ss(self, folder, dt):
        """The files PRE_MAIN reads; returns PRE_MAIN."""
        for name, tensors in (("init", self.init), ("pre", self.pre)):
            safetensors_io.write(
                os.path.join(folder, f"{name}.safetensors"),
                {k: v.astype(dt) if v.dtype.kind == "f" else v
                 for k, v in tensors.items()})
        return self.PRE_MAIN

    def train(self, folder, dt):
        data = read(folder, "data.safetensors")
        logs, finals = None, {}
        for name in self.OPTIMIZERS:
            p, opt = self._start(name, dt)
            mine = self._steps(name, p, opt, data, self.PRE)
            logs = mine if logs is None else [
                dict(a, **b) for a, b in zip(logs, mine)]
            finals[f"final_{name}.safetensors"] = self._checkpoint(
                name, p, opt, self.TOTAL)
        return logs, finals


def metadata_text(meta):
    """Metadata values as ss writes them: numbers exactly (repr), bools as
    true/false, betas as [b1, b2]."""
    def text(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(repr(float(x)) for x in v) + "]"
        return str(v) if isinstance(v, (int, str)) else repr(float(v))
    return {k: text(v) for k, v in meta.items()}


PROGRAMS = {"mlp": Mlp, "mlp_autocast": MlpAutocast, "mlp_f16": MlpF16, "gpt_autocast": GptAutocast, "gpt_groups": GptGroups, "cnn": Cnn, "resnet": ResNet, "lstm_lm": LstmLm, "gpt": Gpt, "gpt_heads": GptHeads,
            "resume": Resume}
