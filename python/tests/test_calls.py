"""Calls from Python on one device: values in and out, checked as
ShapeScript, against numpy and torch."""
import numpy as np
import pytest
import torch

import shapescript as ss
from conftest import TorchLinear, program


@pytest.fixture(scope="module")
def prog():
    p = ss.load(program("small.ss"))
    yield p
    p.close()


def test_declarations_are_attributes(prog):
    assert prog.D == 4 and prog.C == 3
    assert isinstance(prog.forward, ss.Fn)
    assert prog.forward.signature == \
        "fn forward(m: Lin, x: [b D] f64) -> [b C] f64"
    assert isinstance(prog.Lin, ss.ModelType)
    with pytest.raises(AttributeError, match="no fn, model, data record"):
        prog.nope


def test_forward_matches_numpy(prog):
    m = prog.Lin.init(seed=0)
    sd = m.state_dict()
    assert sorted(sd) == ["b", "w"]
    w, b = np.asarray(sd["w"]), np.asarray(sd["b"])
    assert w.shape == (4, 3) and w.dtype == np.float64
    x = np.random.default_rng(0).standard_normal((5, 4))
    y = np.asarray(prog.forward(m, x))
    # numpy's own product: the same f64 sums in another order.
    np.testing.assert_allclose(y, x @ w + b, rtol=1e-14, atol=1e-15)


def test_sgd_steps_match_torch(prog):
    m = prog.Lin.init(seed=1)
    opt = ss.sgd(m, lr=0.1, momentum=0.9)
    ref = TorchLinear(m.state_dict(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(1)
    for i in range(4):
        x = rng.standard_normal((8, 4))
        y = rng.integers(0, 3, 8)
        logs = prog.step(m, opt, x, y)
        # The loss before the update, as torch's: f64 on both sides.
        assert logs.loss == pytest.approx(ref.step(x, y), rel=1e-13)
        assert dict(logs) == {"loss": logs.loss, "steps": 1}
    sd = m.state_dict()
    np.testing.assert_allclose(np.asarray(sd["w"]), ref.w.detach().numpy(),
                               rtol=1e-12, atol=1e-14)


def test_numpy_in_without_a_copy(prog):
    x = np.arange(8, dtype=np.float64).reshape(2, 4)
    r = prog.ident(x)
    assert isinstance(r, ss.Tensor)
    out = np.asarray(r)
    assert out.__array_interface__["data"][0] == \
        x.__array_interface__["data"][0]
    # A read-only array too.
    x.setflags(write=False)
    out = np.asarray(prog.ident(x))
    assert out.__array_interface__["data"][0] == \
        x.__array_interface__["data"][0]
    assert not out.flags.writeable  # ShapeScript's values are immutable


def test_torch_in_and_out_without_a_copy(prog):
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    r = prog.ident(t)
    back = torch.from_dlpack(r)
    assert back.data_ptr() == t.data_ptr()
    assert torch.equal(back, t)
    # A ShapeScript tensor into numpy and torch: the same bytes.
    s = prog.scale(t, 2.0)
    assert torch.from_dlpack(s).data_ptr() == \
        np.asarray(s).__array_interface__["data"][0]
    assert torch.equal(torch.from_dlpack(s), t * 2)


def test_non_contiguous_input_is_copied_once(prog):
    x = np.arange(32, dtype=np.float64).reshape(4, 8)[:, ::2]
    np.testing.assert_array_equal(np.asarray(prog.ident(x)), x)
    t = torch.arange(32, dtype=torch.float64).reshape(8, 4).t()[:, :4]
    np.testing.assert_array_equal(np.asarray(prog.ident(t.t().contiguous().t().t())),
                                  t.t().numpy())


def test_tuples_ints_and_print(prog, capsys):
    x = np.ones((2, 4))
    r, n = prog.pair(x)
    assert n == 7 and isinstance(n, int)
    np.testing.assert_array_equal(np.asarray(r), x)
    assert prog.shout(41) == 42
    assert capsys.readouterr().out == "hello from ShapeScript 41\n"


def test_a_handle_cannot_be_changed(prog):
    m = prog.Lin.init(seed=0)
    with pytest.raises(AttributeError, match="can't be changed from Python"):
        m.w = np.zeros((4, 3))
    # A field read is a copy: training does not change it under Python.
    w0 = np.array(m.w)
    w_read = m.w
    opt = ss.sgd(m, lr=1.0)
    prog.step(m, opt, np.ones((2, 4)), np.array([0, 1]))
    np.testing.assert_array_equal(np.asarray(w_read), w0)
    assert not np.array_equal(np.asarray(m.w), w0)
