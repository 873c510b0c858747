"""GPUs from Python (issue 31): `devices="cuda[0]"` runs in this process,
`"cuda[0 1 2]"` in worker processes a GPU each. Without a GPU they run
through the stand-in for the CUDA module (Note [A stand-in GPU] in
tests/stand_in_gpu/stand_in_gpu.cpp), each in a Python process of its own:
a process opens the CUDA module once. The oracle is the CPU's run of the
same program on the same data (bit for bit on one device, as ss run's
conformance compares them)."""
import json
import os
import subprocess
import sys

import pytest

import shapescript as ss
from conftest import BUILD, ROOT

README = os.path.join(ROOT, "examples", "readme_mlp.ss")
STAND_IN = os.path.join(BUILD, "libss_stand_in_gpu.so")

# Trains the README MLP for two epochs of 192 digits on each device list
# (on cuda[0] the last steps are replays of a recorded step: Note
# [Recorded steps] in interp/devices/recorded_calls.cpp), and reads a
# GPU's value back through numpy and DLPack; prints JSON.
SCRIPT = r"""
import json, sys
import numpy as np
import torch
import shapescript as ss
rng = np.random.default_rng(2)
img = rng.random((192, 784), dtype=np.float32)
label = rng.integers(0, 10, 192)
out = {}
for devices in sys.argv[2:]:
    with ss.load(sys.argv[1], devices=devices) as p:
        ds = ss.TensorDataset(p.Digit, img=img, label=label)
        m = p.Mlp.init(seed=0)
        opt = ss.adamw(m, lr=1e-3)
        losses = [float(p.train_step(m, opt, b).loss)
                  for e in range(2) for b in ds.batches(64, shuffle=e)]
        row = {"losses": losses}
        if "[0 1 2]" not in devices:
            # A numpy array argument goes to the GPU; the result comes back.
            y = p.forward(m, img[:5])
            row["numpy"] = np.asarray(y).tolist()
            row["dlpack"] = torch.from_dlpack(y).tolist()
        out[devices] = row
print(json.dumps(out))
"""


def run_script(*devices, stand_in=True):
    env = dict(os.environ)
    if stand_in:
        env["SS_CUDA_MODULE"] = STAND_IN
        env["SS_STAND_IN_GUARD"] = "1"  # a host read of GPU bytes faults
        env["SHAPESCRIPT_RECORD_STEPS"] = "verbose"
    r = subprocess.run([sys.executable, "-c", SCRIPT, README, *devices],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    out["stderr"] = r.stderr
    return out


@pytest.mark.skipif(not os.path.exists(STAND_IN),
                    reason="the stand-in GPU is built with the tests")
def test_one_gpu_and_three_train_as_the_cpu_does():
    got = run_script("cpu", "cuda[0]", "cpu[0 1 2]", "cuda[0 1 2]")
    assert len(got["cpu"]["losses"]) == 6
    # cuda[0]'s third step was recorded and the last three replayed it.
    assert "`train_step`: recorded" in got["stderr"]
    assert "`train_step` replayed 3 times" in got["stderr"]
    # One GPU: the CPU's bits (the stand-in computes with the CPU backend;
    # what it proves is where every value is and what moves).
    assert got["cuda[0]"] == got["cpu"]
    assert got["cuda[0]"]["dlpack"] == got["cuda[0]"]["numpy"]
    # Three GPUs: three CPU workers' bits.
    assert got["cuda[0 1 2]"] == got["cpu[0 1 2]"]


def test_without_a_gpu_loading_says_why():
    from shapescript._core import cuda_device_count
    if cuda_device_count() > 0:
        pytest.skip("a GPU answers here")
    with pytest.raises(ss.ValueError) as e:
        ss.load(README, devices="cuda[0]")
    assert "the program asks for cuda devices, but " in str(e.value)
    assert 'devices="cpu"' in str(e.value)
