"""Extern fns naming Python functions: called with numpy arrays, on each
worker with its rows, their exceptions raised as themselves."""
import os
import subprocess
import sys

import numpy as np
import pytest

import externs_helper
import shapescript as ss
from conftest import BUILD, program


@pytest.mark.parametrize("devices", [None, "cpu[0 1 2]"])
def test_an_extern_fn_runs_where_its_rows_are(devices):
    x = np.arange(28, dtype=np.float64).reshape(7, 4)
    with ss.load(program("externs.ss"), devices=devices) as prog:
        # A tensor from Python goes whole to every worker (devices.md:
        # split as its parameter is, and x's is not a batch's).
        assert float(prog.flipped_sum(x)) == (x[:, ::-1] * 2).sum()
        # A batch is split: each worker calls it with its own rows.
        (batch,) = list(ss.TensorDataset(prog.Row, x=x).batches(7))
        pids = np.asarray(prog.pids_of(batch))[:, 0].astype(int).tolist()
    if devices is None:
        assert pids == [os.getpid()] * 7
    else:
        # 7 rows over 3 workers: 3/2/2, each worker's own.
        assert pids[0] == pids[1] == pids[2] != pids[3]
        assert pids[3] == pids[4] != pids[5] == pids[6] != pids[0]
        assert os.getpid() not in pids


@pytest.mark.parametrize("devices", [None, "cpu[0 1 2]"])
def test_what_it_raises_reaches_the_caller_as_itself(devices):
    x = np.ones((7, 4))
    with ss.load(program("externs.ss"), devices=devices) as prog:
        (batch,) = list(ss.TensorDataset(prog.Row, x=x).batches(7))
        with pytest.raises(externs_helper.Boom) as e:
            prog.boom_of(batch)
        notes = "\n".join(e.value.__notes__)
        assert "externs.ss:" in notes and "in `boom_of`" in notes
        if devices is None:
            assert str(e.value) == "boom on 7 rows"
            # Raised in this process: the very object, its traceback too.
            assert e.value.__traceback__ is not None
        else:
            assert str(e.value) == "boom on 3 rows"  # worker 0's rows
            assert "raised on worker 0 of 3" in notes
        # The session goes on.
        assert float(prog.flipped_sum(x)) == 56.0


def test_a_result_of_the_wrong_shape_is_a_shape_error():
    with ss.load(program("externs.ss")) as prog:
        with pytest.raises(ss.ShapeError) as e:
            prog.via_wrong(np.ones((2, 4)))
    assert "extern fn `wrong_shape`" in str(e.value)
    assert "[2 3] f64" in str(e.value)


MAIN_SCRIPT = r"""
import numpy as np, shapescript as ss
def double(x):
    return x * 2
open("main_extern.ss", "w").write(
    "dim D = 2\n"
    "extern fn double(x: [b D] f64) -> [b D] f64 = \"__main__.double\"\n"
    "fn twice(x: [b D] f64) -> [b D] f64:\n"
    "    return double(x)\n")
one = ss.load("main_extern.ss")
print(np.asarray(one.twice(np.ones((1, 2)))).tolist())
try:
    ss.load("main_extern.ss", devices="cpu[0 1]")
except ss.ImportError as e:
    print(type(e).__name__, e)
"""


def test_a_function_of_the_main_script_is_an_import_error_on_devices(
        tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    r = subprocess.run([sys.executable, "-c", MAIN_SCRIPT], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "[[2.0, 2.0]]"  # one device: runs in the controller
    assert lines[1].startswith(
        'ImportError extern fn `double`: "__main__.double" is in the main '
        "script, which the workers never import")


def test_an_unimportable_target_is_an_import_error_at_load(tmp_path):
    f = tmp_path / "nowhere.ss"
    f.write_text('dim D = 2\n'
                 'extern fn g(x: [b D] f64) -> [b D] f64 = "no_such_mod.g"\n')
    with pytest.raises(ss.ImportError, match="no_such_mod"):
        ss.load(str(f))
