"""Programs, and the values their calls return (docs/python.md).

Every call from Python is checked as ShapeScript before it runs (Note [Host
calls are checked as ShapeScript] in interp/embed/embed.h): a program's fns
take numpy arrays, torch tensors, numbers, strings and the values earlier
calls returned, and give back Python values: numbers as float and int,
tensors as `shapescript.Tensor` (numpy.asarray and torch.from_dlpack read
them without a copy), and handles for models, optimizers, logs, records,
datasets and batches.
"""
import os
import sys
import warnings

from . import _core, _datasets, _externs


def _worker_path():
    """The controller's sys.path, for the workers' PYTHONPATH: they import
    what the controller could, never its main script."""
    out = []
    for p in sys.path:
        p = os.path.abspath(p or os.getcwd())
        if p not in out and os.path.isdir(p):
            out.append(p)
    # The package itself, wherever it was imported from.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if here not in out:
        out.insert(0, here)
    return out


def _workers():
    """The workers' command up to its `worker` word, and their environment:
    `python3 -m shapescript._worker` with the controller's sys.path."""
    return ([sys.executable, "-m", "shapescript._worker"],
            ["PYTHONPATH=" + os.pathsep.join(_worker_path())])


def load(path, devices=None, dims=None, deterministic=False):
    """Reads and checks the program at `path`.

    devices: a device list replacing the file's (`"cpu[0 1 2]"`);
    dims: `{"Hd": 256}`, as `ss run -D Hd=256`;
    deterministic: as `ss run --deterministic`, one device's bits on any
    device list.
    Raises CheckError with the diagnostics `ss check` prints."""
    # progress(...) draws in Python's sys.stderr: a bar where that is a
    # terminal or a notebook's output (which renders carriage returns).
    _core._set_progress(_progress_drawing())
    session = _core.Session.load(os.fspath(path), devices or "",
                                 dict(dims or {}), bool(deterministic),
                                 *_workers())
    prog = Program(session, os.fspath(path))
    _check_externs(prog)
    _Registry.last = prog
    return prog


def check(path, devices=None, dims=None, deterministic=False):
    """Checks the program at `path` as `ss check` does, running nothing:
    the problems it found (each a dict: code, message, file, line, column,
    and text as `ss check` prints it), [] when it checks."""
    return _core.check(os.fspath(path), devices or "", dict(dims or {}),
                       bool(deterministic))


def run(path, devices=None, dims=None, entry="main", args=(),
        deterministic=False):
    """Runs the program at `path` as `ss run` does: checks it, then runs
    its `entry` fn to the end on its devices (several: worker processes),
    `args` being what its `list[str]` parameter holds, if it has one
    (`ss run FILE -- ARGS`); `deterministic=True` is `ss run
    --deterministic`. Its print goes to sys.stdout; errors raise as
    a call's do (CheckError, ShapeError, ..., WorkerError), and Ctrl-C
    raises KeyboardInterrupt, ending the workers."""
    _core._set_progress(_progress_drawing())
    _core.run(os.fspath(path), devices or "", dict(dims or {}),
              bool(deterministic), entry, [str(a) for a in args], *_workers())


def _check_externs(prog):
    """Each extern fn naming a Python function: importable here, and on
    several devices not in the main script, which the workers never import
    (the seed's ImportError, at load)."""
    from . import _errors
    for fn, target in prog._session.externs():
        where = f"extern fn `{fn}`: \"{target}\""
        if prog.parallel and target.rpartition(".")[0] == "__main__":
            prog.close()
            raise _errors.ImportError(
                f"{where} is in the main script, which the workers never "
                f"import (its top level runs once, in the controller): move "
                f"`{target.rpartition('.')[2]}` to a module of its own")
        try:
            _externs.resolve(target)
        except _externs.Unresolved as e:
            prog.close()
            raise _errors.ImportError(f"{where} cannot be loaded: {e}") \
                from None


def _progress_drawing():
    """How progress(...) draws on sys.stderr: a terminal's bar, a
    notebook's (Jupyter's kernel: carriage returns, no escape sequences), or
    one summary line."""
    err = sys.stderr
    try:
        if err is not None and err.isatty():
            return "terminal"
    except (AttributeError, ValueError):
        pass
    return "notebook" if "ipykernel" in sys.modules else "summary"


class _Registry:
    last = None  # the program a builtin with no handle argument runs in


def _unwrap(x):
    """A Python value as the core passes it."""
    if isinstance(x, _Handle):
        return x._v
    if isinstance(x, (Fn, _TypeName)):
        return _core.Text(x._name)
    if isinstance(x, tuple):
        return tuple(_unwrap(i) for i in x)
    if isinstance(x, list):
        raise TypeError(
            "a list cannot be passed to ShapeScript: give a tuple, or a "
            "tensor (numpy.stack(...))")
    return x


def _wrap(prog, x):
    """A value the core returned, as Python sees it."""
    if isinstance(x, _core.Value):
        cls = _HANDLES.get(x.kind, _Handle)
        if prog.parallel and x.kind in _REMOTE:
            cls = _REMOTE[x.kind]
        return cls(prog, x)
    if isinstance(x, tuple):
        return tuple(_wrap(prog, i) for i in x)
    if isinstance(x, list):
        return [_wrap(prog, i) for i in x]
    return x


def _call(prog, callee, args, kwargs, method=False):
    return _wrap(prog, prog._session.call(
        callee, [_unwrap(a) for a in args],
        [(k, _unwrap(v)) for k, v in kwargs.items() if v is not None],
        method))


class Program:
    """A loaded, checked program: its fns, models, data records and dims
    are attributes (`prog.train_step`, `prog.Mlp`, `prog.Digit`,
    `prog.Hd`). On several devices the program is the controller, and the
    workers start at the first call that needs them."""

    def __init__(self, session, path):
        self._session = session
        self.path = path
        self._fns = set(session.fns())
        self._models = set(session.models())
        self._records = set(session.records())
        self._dims = session.dims()
        self.devices = session.devices()
        self.parallel = "[" in self.devices and self.devices.count(" ") > 0

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        # Made once: a training loop's `prog.train_step(...)` finds it in
        # the instance's dict, without asking the core again.
        if name in self._fns:
            self.__dict__[name] = Fn(self, name)
            return self.__dict__[name]
        if name in self._models:
            self.__dict__[name] = ModelType(self, name)
            return self.__dict__[name]
        if name in self._records:
            self.__dict__[name] = RecordType(self, name)
            return self.__dict__[name]
        if name in self._dims:
            return self._dims[name]
        raise AttributeError(
            f"{self.path} has no fn, model, data record or dim `{name}`")

    def __dir__(self):
        return sorted(set(super().__dir__()) | self._fns | self._models |
                      self._records | set(self._dims))

    def close(self):
        """Ends the program's workers (on several devices). Its values
        stay readable where they were copied to Python."""
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<shapescript program {self.path} on {self.devices}>"


class Fn:
    """A fn of a program: call it with tensors, numbers and values."""

    def __init__(self, prog, name):
        self._prog = prog
        self._name = name
        params = prog._session.params(name)
        result = prog._session.result(name)
        sig = ", ".join(f"{n}: {t}" for n, t in params)
        self.signature = f"fn {name}({sig})" + (f" -> {result}"
                                                 if result else "")
        self.__doc__ = self.signature

    def __call__(self, *args, **kwargs):
        return _call(self._prog, self._name, args, kwargs)

    def __repr__(self):
        return f"<{self.signature}>"


class _TypeName:
    def __init__(self, prog, name):
        self._prog = prog
        self._name = name

    def __repr__(self):
        return f"<{type(self).__name__} {self._name}>"


class ModelType(_TypeName):
    """A model declaration: `prog.Mlp.init(seed=0)` makes one."""

    def init(self, seed=None, **kwargs):
        kw = dict(kwargs)
        if seed is not None:
            kw["seed"] = seed
        return _call(self._prog, self._name + ".init", (), kw)


class RecordType(_TypeName):
    """A data record (`prog.Digit`): what a dataset holds."""


def TensorDataset(record, **fields):
    """A `Dataset[R]` over numpy arrays or torch tensors, one per field of
    the record `R` (`prog.Digit`), each with the items first ([n ...]); a
    size-variable field is a list of arrays, one per item. The arrays are
    kept without a copy (do not change them afterwards) and checked once,
    now: ShapeError or DomainError naming the item and the field. On
    several devices the dataset is sent to each worker once, at the first
    loop that needs it."""
    if not isinstance(record, RecordType):
        raise TypeError("TensorDataset's first argument is a data record "
                        "of a program, such as prog.Digit")
    prog = record._prog
    return _wrap(prog, prog._session.tensor_dataset(record._name, fields))


class _Handle:
    """A ShapeScript value held in Python."""

    __slots__ = ("_prog", "_v")

    def __init__(self, prog, v):
        object.__setattr__(self, "_prog", prog)
        object.__setattr__(self, "_v", v)

    @property
    def type(self):
        """Its ShapeScript type, as written (`AdamW[Mlp]`)."""
        return self._v.type

    def __repr__(self):
        return f"<shapescript {self._v.type}>"


class Model(_Handle):
    """A model: `m.w1` reads a param (a copy), `m.state_dict()` all of
    them. It cannot be changed from Python: a ShapeScript fn that takes it
    as `mut` changes it."""

    __slots__ = ()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _wrap(self._prog, self._prog._session.field(self._v, name))

    def __setattr__(self, name, value):
        raise AttributeError(
            f"a model can't be changed from Python: a ShapeScript fn that "
            f"takes it as `mut` changes it (`{name}`)")

    def state_dict(self):
        """Every tensor of the model by its path ("w1", "l1.w"), whole."""
        return self._prog._session.state_dict(self._v)


class Optimizer(_Handle):
    """An optimizer's state (`adamw(m, lr=1e-3)`)."""

    __slots__ = ()


class Logs(_Handle):
    """A logs record: `logs.loss` (a float for a number), `dict(logs)`."""

    __slots__ = ("_entries",)

    def __init__(self, prog, v):
        super().__init__(prog, v)
        entries = {}
        for k, x in v.entries():
            if isinstance(x, _core.Tensor) and x.ndim == 0:
                x = x.item()
            entries[k] = _wrap(prog, x)
        object.__setattr__(self, "_entries", entries)

    def __getattr__(self, name):
        try:
            return self._entries[name]
        except KeyError:
            raise AttributeError(
                f"these logs have no `{name}`: they have "
                f"{', '.join(self._entries) or 'nothing'}") from None

    def __getitem__(self, name):
        return self._entries[name]

    def keys(self):
        return self._entries.keys()

    def values(self):
        return self._entries.values()

    def items(self):
        return self._entries.items()

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def __contains__(self, name):
        return name in self._entries

    def __repr__(self):
        return "Logs(" + ", ".join(f"{k}={v!r}" for k, v in
                                   self._entries.items()) + ")"


class Record(_Handle):
    """A record, or a batch of records: its fields are attributes."""

    __slots__ = ()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _wrap(self._prog, self._prog._session.field(self._v, name))


class _Iterable(_Handle):
    __slots__ = ()

    def __iter__(self):
        for x in self._prog._session.iterate(self._v):
            yield _wrap(self._prog, x)

    def __len__(self):
        n = self._v.length
        if n < 0:
            raise TypeError("its length is not known before it is walked")
        return n

    def __getattr__(self, name):
        # ShapeScript's methods of datasets and batches: split, take, ...
        if name.startswith("_"):
            raise AttributeError(name)

        def method(*args, **kwargs):
            return _call(self._prog, name, (self,) + args, kwargs,
                         method=True)

        method.__name__ = name
        return method


class Dataset(_Iterable):
    """A dataset: `.batches(64, shuffle=epoch)`, `.split(0.9)`, `len()`,
    and walking it gives its records.

    `shapescript.Dataset(prog.Digit, obj)` makes one of a Python object
    with `__len__` and `__getitems__(indices)` (a dict of stacked fields,
    checked as a whole batch) or `__getitem__(i)` (a dict of one item's
    fields), read as batches load. On several devices it is sent to the
    workers (pickled), each loading its own part; an object whose class is
    in the main script cannot be, and is read whole here, with a warning."""

    __slots__ = ()

    def __new__(cls, first, second):
        if isinstance(first, RecordType):
            return _python_dataset(first, second)
        return super().__new__(cls)

    def __init__(self, first, second):
        if not isinstance(first, RecordType):  # else made by __new__
            super().__init__(first, second)

    def batches(self, n, shuffle=None, **kwargs):
        return _call(self._prog, "batches", (self, n),
                     dict(kwargs, shuffle=shuffle), method=True)

    def split(self, *fractions, **kwargs):
        return _call(self._prog, "split", (self,) + fractions, kwargs,
                     method=True)


def _python_dataset(record, obj):
    prog = record._prog
    n = len(obj)
    if prog.parallel and not _datasets.payload(obj):
        warnings.warn(
            f"{type(obj).__name__} is defined in the main script (or cannot "
            f"be pickled), so the workers cannot load it: its {n} items are "
            f"read into memory here, now, and sent to each worker once "
            f"(define it in a module of its own to have each worker load "
            f"its part)", stacklevel=3)
        return TensorDataset(record, **_datasets.load(obj, range(n)))
    return _wrap(prog, prog._session.host_dataset(record._name, n, obj))


class Batches(_Iterable):
    """A dataset's batches: walk them."""

    __slots__ = ()


class Sink(_Handle):
    __slots__ = ()


class Mode(_Handle):
    __slots__ = ()


_HANDLES = {
    "model": Model,
    "grads": Model,
    "optim": Optimizer,
    "logs": Logs,
    "record": Record,
    "dataset": Dataset,
    "batches": Batches,
    "sink": Sink,
    "mode": Mode,
}
_REMOTE = {}  # filled by shapescript.parallel
