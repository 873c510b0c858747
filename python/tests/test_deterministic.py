"""Deterministic mode from Python (`deterministic=True`, as `ss run
--deterministic`; Note [Deterministic mode] in
interp/devices/lower/chunks.h): one device's bits on three devices, for a
whole program run and for calls from Python. The oracle is one device in
the same mode, the mode's definition; the control is the same comparison
without the mode, which three devices' rounding fails."""
import os

import numpy as np

import shapescript as ss
from conftest import ROOT

SMALL = os.path.join(ROOT, "conformance", "dist", "readme_mlp_small.ss")
README = os.path.join(ROOT, "examples", "readme_mlp.ss")
HEADS = os.path.join(ROOT, "conformance", "dist", "split_heads_attention.ss")
MESH = os.path.join(ROOT, "conformance", "errors",
                    "E2005_deterministic_mesh_ok.ss")


def printed(capsys, **kw):
    ss.run(SMALL, **kw)
    return capsys.readouterr().out


def test_a_run_prints_one_devices_bits_on_three(capsys):
    one = printed(capsys, devices="cpu", deterministic=True)
    three = printed(capsys, devices="cpu[0 1 2]", deterministic=True)
    assert one == three
    # The control: without the mode the last line's sums differ in their
    # last bits (the params do).
    assert printed(capsys, devices="cpu[0 1 2]") != one


def steps(devices, deterministic, n=12):
    prog = ss.load(README, devices=devices, deterministic=deterministic)
    train, _ = ss.synthetic_digits(prog.Digit, 2000, seed=0).split(0.9)
    m = prog.Mlp.init(seed=0)
    opt = ss.adamw(m, lr=1e-3)
    losses = []
    for i, batch in enumerate(train.batches(50, shuffle=0)):
        losses.append(float(prog.train_step(m, opt, batch).loss))
        if i + 1 == n:
            break
    params = {k: np.array(v) for k, v in m.state_dict().items()}
    prog.close()
    return losses, params


def test_calls_from_python_give_one_devices_bits_on_three():
    one_losses, one = steps("cpu", True)
    three_losses, three = steps("cpu[0 1 2]", True)
    assert one_losses == three_losses
    assert one.keys() == three.keys()
    for k in one:
        assert one[k].tobytes() == three[k].tobytes(), k
    # The control: three devices without the mode round their own way.
    _, plain = steps("cpu[0 1 2]", False)
    assert any(one[k].tobytes() != plain[k].tobytes() for k in one)


def test_split_heads_gives_one_devices_bits_on_three(capsys):
    # Note [Heads one at a time] (interp/devices/lower/heads.cpp).
    assert ss.check(HEADS, deterministic=True) == []
    ss.run(HEADS, devices="cpu", deterministic=True)
    one = capsys.readouterr().out
    ss.run(HEADS, devices="cpu[0 1 2]", deterministic=True)
    assert capsys.readouterr().out == one
    ss.run(HEADS, devices="cpu[0 1 2]")
    assert capsys.readouterr().out != one  # the control


def test_check_refuses_the_mode_with_a_mesh():
    problems = ss.check(MESH, deterministic=True)
    assert [p["code"] for p in problems] == ["E2005"]
    assert "deterministic mode with a mesh" in problems[0]["message"]
    assert ss.check(MESH) == []
