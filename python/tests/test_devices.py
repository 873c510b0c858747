"""Several devices from Python (cpu[0 1 2]): remote handles, the same
results as one device, a killed worker."""
import os
import signal
import time

import numpy as np
import pytest

import shapescript as ss
from conftest import ROOT, TorchLinear, program

README = os.path.join(ROOT, "examples", "readme_mlp.ss")


def children_named(word):
    """This process's child processes whose command line holds [word]."""
    out = []
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if ppid == me and word in cmd:
            out.append(int(pid))
    return out


def train_steps(devices, steps=20):
    prog = ss.load(README, devices=devices)
    train, _ = ss.synthetic_digits(prog.Digit, 6000, seed=0).split(0.9)
    m = prog.Mlp.init(seed=0)
    opt = ss.adamw(m, lr=1e-3)
    losses = []
    for i, batch in enumerate(train.batches(64, shuffle=0)):
        losses.append(prog.train_step(m, opt, batch).loss)
        if i + 1 == steps:
            break
    return prog, m, losses


def test_remote_handles_compute_what_one_device_does():
    one, m1, l1 = train_steps(None)
    three, m3, l3 = train_steps("cpu[0 1 2]")
    try:
        assert isinstance(m3, ss.parallel.RemoteModel)
        assert not isinstance(m1, ss.parallel.RemoteModel)
        assert len(children_named("shapescript._worker")) == 3
        # devices.md item 1: f32, relative 1e-5 per step.
        np.testing.assert_allclose(l3, l1, rtol=1e-5 * len(l1))
        w1 = np.asarray(m1.w1)
        w3 = np.asarray(m3.w1)
        # AdamW divides each gradient element by its own scale: where one
        # is at rounding level, the two runs' steps of that element may
        # differ by up to lr (1e-3) a step. Every other element agrees to
        # f32 rounding.
        close = np.isclose(w3, w1, rtol=1e-4, atol=1e-6)
        assert close.mean() > 0.9999
        assert np.abs(w3 - w1).max() <= 20 * 1e-3
        sd = m3.state_dict()
        assert sorted(sd) == ["w1", "w2"]
        np.testing.assert_array_equal(np.asarray(sd["w1"]), w3)
        with pytest.raises(AttributeError):
            m3.w1 = w1
    finally:
        three.close()
        one.close()
    assert children_named("shapescript._worker") == []


def test_shard_params_reads_whole_params_matching_torch():
    prog = ss.load(program("sharded.ss"))
    try:
        m = prog.Lin.init(seed=3)
        opt = ss.sgd(m, lr=0.5)
        ref = TorchLinear(m.state_dict(), lr=0.5)
        rng = np.random.default_rng(3)
        for _ in range(3):
            x = rng.standard_normal((7, 6))  # 3/2/2 over the workers
            y = rng.integers(0, 4, 7)
            logs = prog.step(m, opt, x, y)
            assert logs.loss == pytest.approx(ref.step(x, y), rel=1e-12)
        # Read whole (gathered from the pieces), as torch's.
        assert m.w.shape == (6, 4)
        np.testing.assert_allclose(np.asarray(m.w), ref.w.detach().numpy(),
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.asarray(m.state_dict()["b"]),
                                   ref.b.detach().numpy(), rtol=1e-12,
                                   atol=1e-14)
    finally:
        prog.close()


def test_a_killed_worker_is_a_worker_error_with_nothing_left():
    prog, m, _ = train_steps("cpu[0 1 2]", steps=2)
    try:
        train, _ = ss.synthetic_digits(prog.Digit, 600, seed=0).split(0.9)
        opt = ss.adamw(m, lr=1e-3)
        batch = next(iter(train.batches(64)))
        workers = children_named("shapescript._worker")
        assert len(workers) == 3
        os.kill(workers[1], signal.SIGKILL)
        with pytest.raises(ss.WorkerError) as e:
            prog.train_step(m, opt, batch)
        err = e.value
        assert isinstance(err, RuntimeError)
        assert err.worker in (0, 1, 2) and "SIGKILL" in err.how
        # Killed between calls: found at the next one (or while it ran).
        assert err.running in ("", "train_step")
        assert err.where.startswith("<python>")
        deadline = time.time() + 5
        while children_named("shapescript._worker") and time.time() < deadline:
            time.sleep(0.05)
        assert children_named("shapescript._worker") == []
    finally:
        prog.close()


def test_split_heads_handles_read_whole_params_as_one_device():
    import torch
    x = np.random.default_rng(6).standard_normal((5, 6))
    runs = {}
    for devices in ("cpu", None):  # None: the file's cpu[0 1 2], split H
        with ss.load(program("heads.ss"), devices=devices) as prog:
            m = prog.Heads.init(seed=2)
            opt = ss.sgd(m, lr=0.1)
            before = {k: np.asarray(v) for k, v in m.state_dict().items()}
            losses = [prog.step(m, opt, x).loss for _ in range(3)]
            runs[devices] = (before, losses, np.asarray(m.w_in),
                             m.state_dict())
    one, heads = runs["cpu"], runs[None]
    # The init is the same params, read whole from the heads' pieces.
    for k in ("w_in", "w_out"):
        assert heads[0][k].shape == one[0][k].shape
        np.testing.assert_array_equal(heads[0][k], one[0][k])
    # torch's loss of the same params: the oracle of the first step.
    w_in = torch.tensor(one[0]["w_in"])
    w_out = torch.tensor(one[0]["w_out"])
    tx = torch.from_numpy(x)
    want = ((torch.relu(tx @ w_in) @ w_out - tx) ** 2).mean().item()
    assert heads[1][0] == pytest.approx(want, rel=1e-13)
    np.testing.assert_allclose(heads[1], one[1], rtol=1e-12)
    assert heads[2].shape == (6, 6)
    np.testing.assert_allclose(heads[2], one[2], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(heads[3]["w_out"]),
                               np.asarray(one[3]["w_out"]), rtol=1e-12,
                               atol=1e-15)


def test_collective_timeout_reaches_workers_started_afterwards():
    ss.collective_timeout(42.5)
    try:
        with ss.load(program("externs.ss"), devices="cpu[0 1]") as prog:
            (batch,) = list(ss.TensorDataset(
                prog.Row, x=np.zeros((2, 4))).batches(2))
            seen = np.asarray(prog.timeout_of(batch))
        assert seen.tolist() == [[42.5] * 4] * 2
    finally:
        os.environ.pop("SHAPESCRIPT_COLLECTIVE_TIMEOUT", None)
    with pytest.raises(ValueError, match="seconds > 0"):
        ss.collective_timeout(0)
