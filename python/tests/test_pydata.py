"""Datasets written in Python (ss.Dataset over an object with __getitems__
or __getitem__): read as batches load, checked, on several devices loaded
by each worker."""
import os
import subprocess
import sys

import numpy as np
import pytest

import digits_helper
import shapescript as ss
from conftest import BUILD, ROOT

README = os.path.join(ROOT, "examples", "readme_mlp.ss")


def digits(n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, 784), dtype=np.float32),
            rng.integers(0, 10, n))


@pytest.fixture(scope="module")
def prog():
    p = ss.load(README)
    yield p
    p.close()


@pytest.mark.parametrize("kind", ["getitems", "getitem"])
def test_batches_are_the_objects_rows(prog, kind):
    img, label = digits(50)
    obj = (digits_helper.Digits(img, label) if kind == "getitems" else
           digits_helper.ItemDigits(img, label))
    ds = ss.Dataset(prog.Digit, obj)
    assert isinstance(ds, ss.Dataset) and len(ds) == 50
    ref = ss.TensorDataset(prog.Digit, img=img, label=label)
    got = list(ds.batches(16, shuffle=3))
    want = list(ref.batches(16, shuffle=3))
    assert [b.img.shape[0] for b in got] == [16, 16, 16, 2]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g.img), np.asarray(w.img))
        np.testing.assert_array_equal(np.asarray(g.label),
                                      np.asarray(w.label))


def test_a_bad_item_is_named_by_its_index(prog):
    img, label = digits(20)
    label[13] = 11
    ds = ss.Dataset(prog.Digit, digits_helper.Digits(img, label))
    with pytest.raises(ss.DomainError) as e:
        for _ in ds.batches(8):
            pass
    assert "item 13 of Dataset(Digit)" in str(e.value)
    assert "label" in str(e.value)
    img64 = img.astype(np.float64)
    ds = ss.Dataset(prog.Digit, digits_helper.Digits(img64, label))
    with pytest.raises(ss.ShapeError, match="f64"):
        next(iter(ds.batches(8)))


def test_what_getitems_raises_reaches_the_loop_as_itself(prog):
    img, label = digits(20)
    ds = ss.Dataset(prog.Digit, digits_helper.Digits(img, label, fail_at=9))
    with pytest.raises(digits_helper.BadRows, match="row 9 is bad"):
        for _ in ds.batches(8):
            pass


def test_workers_load_their_own_rows(tmp_path):
    img, label = digits(128, seed=4)
    log = tmp_path / "loads.txt"
    losses = {}
    for devices in (None, "cpu[0 1 2]"):
        log.write_text("")
        with ss.load(README, devices=devices) as p:
            ds = ss.Dataset(p.Digit, digits_helper.Digits(img, label,
                                                          log=str(log)))
            m = p.Mlp.init(seed=0)
            opt = ss.adamw(m, lr=1e-3)
            losses[devices] = [p.train_step(m, opt, b).loss
                               for b in ds.batches(64, shuffle=5)]
        loads = [list(map(int, l.split())) for l in
                 log.read_text().splitlines()]
        pids = {l[0] for l in loads}
        if devices is None:
            assert pids == {os.getpid()}
        else:
            # Each worker loads its own share of each batch: 22/21/21.
            assert len(pids) == 3 and os.getpid() not in pids
            assert sorted(len(l) - 1 for l in loads) == [21, 21, 21, 21,
                                                          22, 22]
            rows = sorted(r for l in loads for r in l[1:])
            assert rows == list(range(128))
    np.testing.assert_allclose(losses["cpu[0 1 2]"], losses[None], rtol=2e-5)


MAIN_DATASET = r"""
import warnings
import numpy as np, shapescript as ss
class Local:
    def __len__(self):
        return 6
    def __getitem__(self, i):
        return {{"img": np.full(784, 0.5, np.float32), "label": i % 10}}
prog = ss.load({path!r}, devices="cpu[0 1]")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    ds = ss.Dataset(prog.Digit, Local())
print(len(w), "defined in the main script" in str(w[0].message))
m = prog.Mlp.init(seed=0)
opt = ss.adamw(m, lr=1e-3)
print([round(prog.train_step(m, opt, b).loss, 3) > 0 for b in ds.batches(3)])
"""


def test_a_dataset_of_the_main_script_is_read_here_with_a_warning():
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    r = subprocess.run([sys.executable, "-c",
                        MAIN_DATASET.format(path=README)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1 True\n[True, True]\n"


def test_what_getitems_raises_on_a_worker_reaches_the_loop_as_itself():
    img, label = digits(64)
    with ss.load(README, devices="cpu[0 1 2]") as p:
        ds = ss.Dataset(p.Digit, digits_helper.Digits(img, label, fail_at=30))
        m = p.Mlp.init(seed=0)
        opt = ss.adamw(m, lr=1e-3)
        with pytest.raises(digits_helper.BadRows, match="row 30 is bad") as e:
            for b in ds.batches(64):
                p.train_step(m, opt, b)
        # Raised at the call whose batch the workers were loading.
        assert e.value.__notes__[0].startswith("at <python>:")
        # The session goes on.
        ok = ss.TensorDataset(p.Digit, img=img, label=label)
        assert p.train_step(m, opt, next(iter(ok.batches(64)))).loss > 0
