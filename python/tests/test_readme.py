"""The README example driven from Python (examples/readme_mlp.py): the
same losses as `ss run`, bit for bit, and matplotlib's loss curve."""
import os
import subprocess
import sys

import numpy as np


def test_same_losses_as_ss_run(root, build, tmp_path):
    ss_dir = tmp_path / "ss"
    py_dir = tmp_path / "py"
    ss_dir.mkdir()
    py_dir.mkdir()
    subprocess.run([os.path.join(build, "ss"), "run",
                    os.path.join(root, "examples", "readme_mlp.ss")],
                   cwd=ss_dir, check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    out = subprocess.run(
        [sys.executable, os.path.join(root, "examples", "readme_mlp.py"),
         "--losses", "losses.txt", "--plot", "loss.png"],
        cwd=py_dir, env=env, check=True, capture_output=True, text=True)
    # `ss run`'s train.csv: step,loss with each f32 loss in its shortest
    # text; Python's: the same f32 as a float. Equal as f32 bits.
    rows = (ss_dir / "train.csv").read_text().splitlines()[1:]
    want = [r.split(",")[1] for r in rows]
    got = [str(np.float32(float(x)))
           for x in (py_dir / "losses.txt").read_text().split()]
    assert len(want) == 3 * 844
    assert got == want
    assert "epoch 2: mean loss" in out.stdout
    assert "acc=1.0" in out.stdout
    png = (py_dir / "loss.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
