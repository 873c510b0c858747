"""The Python module's tests (issue 27), run by ctest's `python_module`
with PYTHONPATH=build/python: `pytest python/tests`. The oracles are
independent of ShapeScript: torch and numpy on the same init and data, and
`ss run` of the same program for the README example."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
BUILD = os.environ.get("SS_BUILD_DIR", os.path.join(ROOT, "build"))
if os.path.join(BUILD, "python") not in sys.path:
    sys.path.insert(0, os.path.join(BUILD, "python"))

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "programs")


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def build():
    return BUILD


def program(name):
    return os.path.join(PROGRAMS, name)


class TorchLinear:
    """torch's side of the tests' linear classifier (programs/small.ss,
    sharded.ss): the same params, cross_entropy, and torch.optim.SGD."""

    def __init__(self, state_dict, lr, momentum=0.0):
        import numpy as np
        import torch
        self.torch = torch
        self.w = torch.tensor(np.asarray(state_dict["w"]), requires_grad=True)
        self.b = torch.tensor(np.asarray(state_dict["b"]), requires_grad=True)
        self.opt = torch.optim.SGD([self.w, self.b], lr=lr, momentum=momentum)

    def step(self, x, y):
        """One step on numpy x, y; the loss before it."""
        t = self.torch
        self.opt.zero_grad()
        loss = t.nn.functional.cross_entropy(
            t.from_numpy(x) @ self.w + self.b, t.from_numpy(y))
        loss.backward()
        self.opt.step()
        return loss.item()
