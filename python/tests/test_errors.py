"""Every error class, raised with its notes."""
import builtins

import numpy as np
import pytest

import shapescript as ss
from conftest import program


@pytest.fixture(scope="module")
def prog():
    p = ss.load(program("small.ss"))
    yield p
    p.close()


def test_a_program_that_does_not_check():
    with pytest.raises(ss.CheckError) as e:
        ss.load(program("bad.ss"))
    (p,) = e.value.problems
    assert p["code"] == "E0302"
    assert p["file"].endswith("bad.ss") and (p["line"], p["column"]) == (4, 12)
    assert "matmul contracts D (4) with b" in p["message"]
    assert "error[E0302]" in str(e.value)
    # `ss check`'s text, caret and all, is its note.
    assert "^^^^^" in "\n".join(e.value.__notes__)
    assert isinstance(e.value, ss.Error) and isinstance(e.value, TypeError)


def test_a_file_that_cannot_be_read():
    with pytest.raises(ss.IOError) as e:
        ss.load("/nonexistent/x.ss")
    assert isinstance(e.value, OSError)
    assert "cannot read '/nonexistent/x.ss'" in str(e.value)


def test_a_tensor_of_the_wrong_shape(prog):
    m = prog.Lin.init(seed=0)
    with pytest.raises(ss.CheckError) as e:
        prog.forward(m, np.zeros((2, 5)))
    (p,) = e.value.problems
    assert p["code"] == "E0303"
    assert "argument `x` of `forward` must be [b D] f64" in p["message"]
    assert "5 where D (4) is expected" in p["text"]


def test_a_tensor_of_the_wrong_dtype(prog):
    with pytest.raises(ss.CheckError) as e:
        prog.ident(np.zeros((2, 4), dtype=np.float32))
    assert "f32" in str(e.value) and "f64" in str(e.value)


def test_a_size_two_arguments_disagree_on(prog):
    m = prog.Lin.init(seed=0)
    with pytest.raises(ss.CheckError) as e:
        prog.loss(m, np.zeros((3, 4)), np.zeros(2, dtype=np.int64))
    (p,) = e.value.problems
    assert p["code"] == "E0303"
    assert "argument `y` of `loss` must be [b] i64, found [2] i64" in \
        p["message"]
    assert "`b` is 3 in `x`" in p["text"]


def test_a_value_error_at_its_ss_line(prog):
    m = prog.Lin.init(seed=0)
    with pytest.raises(ss.ValueError) as e:
        ss.sgd(m, lr=-1.0)
    assert isinstance(e.value, builtins.ValueError)
    assert e.value.kind == "ValueError"


def test_a_runtime_error_with_the_ss_location_and_stack(prog):
    m = prog.Lin.init(seed=0)
    # A label outside 0..C in cross_entropy: raised at small.ss's line.
    with pytest.raises(ss.ValueError) as e:
        prog.loss(m, np.zeros((2, 4)), np.array([0, 7]))
    assert "label 7" in str(e.value)
    assert e.value.location.startswith(program("small.ss") + ":")
    notes = "\n".join(e.value.__notes__)
    assert "at " + e.value.location in notes
    assert "in `loss`" in notes


def test_an_io_error_from_a_builtin(prog, tmp_path):
    m = prog.Lin.init(seed=0)
    with pytest.raises(ss.IOError):
        ss.save(str(tmp_path / "no" / "such" / "dir" / "m.safetensors"), m)


def test_what_cannot_be_passed(prog):
    with pytest.raises(TypeError, match="cannot pass a dict"):
        prog.ident({"x": 1})
    with pytest.raises(TypeError, match="ShapeScript has no dtype"):
        prog.ident(np.zeros((2, 4), dtype=np.uint8))
