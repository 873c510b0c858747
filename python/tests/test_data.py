"""Datasets made in Python: TensorDataset over numpy arrays and torch
tensors, checked once, walked in ShapeScript's batches."""
import os
import sys

import numpy as np
import pytest
import torch

import shapescript as ss
from conftest import ROOT

README = os.path.join(ROOT, "examples", "readme_mlp.ss")


def digits(n, seed=0):
    rng = np.random.default_rng(seed)
    img = rng.random((n, 784), dtype=np.float32)
    label = rng.integers(0, 10, n)
    return img, label


@pytest.fixture(scope="module")
def prog():
    p = ss.load(README)
    yield p
    p.close()


def test_batches_hold_the_arrays_rows(prog):
    img, label = digits(10)
    before = sys.getrefcount(img)
    ds = ss.TensorDataset(prog.Digit, img=img, label=torch.from_numpy(label))
    assert sys.getrefcount(img) == before + 1  # kept, not copied
    assert len(ds) == 10 and isinstance(ds, ss.Dataset)
    batches = list(ds.batches(4))
    assert [b.img.shape for b in batches] == [(4, 784), (4, 784), (2, 784)]
    np.testing.assert_array_equal(np.asarray(batches[1].img), img[4:8])
    np.testing.assert_array_equal(np.asarray(batches[2].label), label[8:])
    first, rest = ds.split(0.3)
    assert (len(first), len(rest)) == (3, 7)
    del ds, batches, first, rest
    assert sys.getrefcount(img) == before


def test_a_step_on_a_tensor_dataset_matches_torch(prog):
    img, label = digits(32, seed=1)
    ds = ss.TensorDataset(prog.Digit, img=img, label=label)
    m = prog.Mlp.init(seed=0)
    sd = m.state_dict()
    (batch,) = list(ds.batches(32))
    logs = prog.evaluate(m, batch)
    # torch's forward on the same weights and rows: f32 both sides.
    x = torch.from_numpy(img)
    logits = torch.relu(x @ torch.from_dlpack(sd["w1"])) @ \
        torch.from_dlpack(sd["w2"])
    want = torch.nn.functional.cross_entropy(logits, torch.from_numpy(label))
    assert logs.loss == pytest.approx(want.item(), rel=1e-5)


def test_a_field_of_the_wrong_shape_is_a_shape_error(prog):
    img, label = digits(5)
    with pytest.raises(ss.ShapeError) as e:
        ss.TensorDataset(prog.Digit, img=img[:, :783], label=label)
    assert "TensorDataset(Digit)" in str(e.value)
    assert "img" in str(e.value) and "783" in str(e.value)
    with pytest.raises(ss.ShapeError, match="f64"):
        ss.TensorDataset(prog.Digit, img=img.astype(np.float64), label=label)
    with pytest.raises(ss.ShapeError, match="has no field `label`"):
        ss.TensorDataset(prog.Digit, img=img)
    with pytest.raises(ss.ShapeError, match="`label` has 4 items"):
        ss.TensorDataset(prog.Digit, img=img, label=label[:4])
    with pytest.raises(ss.TypeError, match="no field `pixels`"):
        ss.TensorDataset(prog.Digit, img=img, label=label, pixels=img)


def test_a_value_outside_its_domain_is_a_domain_error(prog):
    img, label = digits(5)
    label[3] = 12
    with pytest.raises(ss.DomainError) as e:
        ss.TensorDataset(prog.Digit, img=img, label=label)
    assert isinstance(e.value, ValueError)
    assert "item 3" in str(e.value) and "label" in str(e.value)


def test_several_devices_train_on_it_as_one_device_does():
    img, label = digits(192, seed=2)
    losses = {}
    for devices in (None, "cpu[0 1 2]"):
        with ss.load(README, devices=devices) as p:
            ds = ss.TensorDataset(p.Digit, img=img, label=label)
            m = p.Mlp.init(seed=0)
            opt = ss.adamw(m, lr=1e-3)
            losses[devices] = [p.train_step(m, opt, b).loss
                               for b in ds.batches(64, shuffle=1)]
    assert len(losses[None]) == 3
    # devices.md item 1: f32, relative 1e-5 per step.
    np.testing.assert_allclose(losses["cpu[0 1 2]"], losses[None], rtol=3e-5)
