"""ShapeScript from Python (docs/python.md).

    import shapescript
    prog = shapescript.load("examples/readme_mlp.ss")
    train, test = shapescript.synthetic_digits(prog.Digit, 60000, seed=0).split(0.9)
    m = prog.Mlp.init(seed=0)
    opt = shapescript.adamw(m, lr=1e-3)
    for batch in train.batches(64, shuffle=0):
        logs = prog.train_step(m, opt, batch)

Importing it changes nothing of the process: no signal handler, no atexit
hook, no allocator setting (`ss`'s own main sets those).
"""
import os as _os

from . import _core
from ._errors import (CheckError, DomainError, Error, ImportError, IOError,
                      MemoryError, ShapeError, TypeError, ValueError,
                      WorkerError)
from ._program import (Batches, Dataset, Fn, Logs, Model, ModelType, Optimizer,
                       Program, Record, RecordType, TensorDataset, check,
                       load, run)
from ._core import Tensor
from . import _program, parallel

# ShapeScript's extern fns may name Python functions (shapescript/_externs.py).
_core._enable_externs()

__all__ = [
    "load", "check", "run", "Program", "Fn", "Tensor", "Model", "Optimizer", "Logs", "Record",
    "Dataset", "Batches", "ModelType", "RecordType", "Error", "CheckError",
    "ShapeError", "DomainError", "ValueError", "TypeError", "IOError",
    "ImportError", "MemoryError", "WorkerError", "collective_timeout",
    "parallel", "Eval", "Train", "TensorDataset",
] + [
    "adamw", "adam", "sgd", "rmsprop", "adagrad", "adadelta", "lion", "csv",
    "jsonl", "synthetic_digits", "save", "mean_logs",
]


def _program_of(args, kwargs):
    for x in list(args) + list(kwargs.values()):
        p = getattr(x, "_prog", None)
        if p is not None:
            return p
    p = _program._Registry.last
    if p is None:
        raise RuntimeError("load a program first (shapescript.load)")
    return p


def _builtin(name, doc):
    def call(*args, **kwargs):
        return _program._call(_program_of(args, kwargs), name, args, kwargs)

    call.__name__ = name
    call.__doc__ = doc
    return call


adamw = _builtin("adamw", "adamw(m, lr=1e-3, ...): AdamW's state for m")
adam = _builtin("adam", "adam(m, lr=1e-3, ...): Adam's state for m")
sgd = _builtin("sgd", "sgd(m, lr=..., momentum=...): SGD's state for m")
rmsprop = _builtin("rmsprop", "rmsprop(m, lr=...): RMSprop's state for m")
adagrad = _builtin("adagrad", "adagrad(m, lr=...): Adagrad's state for m")
adadelta = _builtin("adadelta", "adadelta(m, lr=...): Adadelta's state")
lion = _builtin("lion", "lion(m, lr=...): Lion's state for m")
csv = _builtin("csv", "csv(path): a sink writing logs as CSV rows")
jsonl = _builtin("jsonl", "jsonl(path): a sink writing logs as JSON lines")
synthetic_digits = _builtin(
    "synthetic_digits",
    "synthetic_digits(Record, n, seed=s): the library's synthetic digits")
save = _builtin("save", "save(path, m, opt, ...): a safetensors checkpoint")
mean_logs = _builtin(
    "mean_logs", "mean_logs(fn, m, batches): fn's logs averaged over batches")


def Train(seed):
    """The training mode `Train(seed=s)` (dropout draws from it)."""
    return _program._call(_program_of((), {}), "Train", (), {"seed": seed})


class _Eval(_program._TypeName):
    pass


Eval = _Eval(None, "Eval")


def collective_timeout(seconds):
    """How long a worker waits for the others in one collective before the
    call fails with a WorkerError saying where each was: for workers started
    afterwards (SHAPESCRIPT_COLLECTIVE_TIMEOUT)."""
    s = float(seconds)
    if not s > 0:
        raise ValueError(f"a collective timeout is a number of seconds > 0, "
                         f"not {seconds!r}")
    _os.environ["SHAPESCRIPT_COLLECTIVE_TIMEOUT"] = repr(s)

