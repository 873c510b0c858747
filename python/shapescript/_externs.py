"""Extern fns written in Python (docs/python.md, Extern fns):

    extern fn random_crop(img: [b D]) -> [b D] = "augment.random_crop"

names `random_crop` in the module `augment`, imported from sys.path (on
several devices by each worker, from the controller's sys.path). It is
called with numpy arrays (read-only views of ShapeScript's tensors, no
copy) and Python numbers, and returns an array (numpy, torch, or a
shapescript.Tensor) of the declared type. What it raises reaches the
caller as itself, with the `.ss` location added as a note."""
import base64
import importlib
import itertools
import pickle

import numpy as np

from . import _core

IN_WORKER = False  # set by shapescript._worker

_functions = {}
_raised = {}  # this process's exceptions, by id, until raised again
_ids = itertools.count()


class Unresolved(Exception):
    """The target cannot be imported (an ImportError at the call)."""


def resolve(target):
    f = _functions.get(target)
    if f is not None:
        return f
    module, _, name = target.rpartition(".")
    if module == "__main__" and IN_WORKER:
        raise Unresolved(
            "it is in the main script, which the workers never import (its "
            "top level runs once, in the controller): move it to a module")
    try:
        f = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise Unresolved(f"{type(e).__name__}: {e}") from None
    if not callable(f):
        raise Unresolved(f"{target} is not a function")
    _functions[target] = f
    return f


def call(target, args):
    f = resolve(target)
    return f(*[np.asarray(a) if isinstance(a, _core.Tensor) else a
               for a in args])


def payload(exc):
    """What carries [exc] back to the caller: itself in this process, its
    pickle from a worker."""
    if not IN_WORKER:
        k = next(_ids)
        _raised[k] = exc
        return f"local:{k}"
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
    except Exception:  # not picklable: its type's name and text
        data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
    return "pickle:" + base64.b64encode(data).decode()


def exception(text):
    """The exception a payload carries, or None."""
    kind, _, data = text.partition(":")
    try:
        if kind == "local":
            return _raised.pop(int(data), None)
        if kind == "pickle":
            return pickle.loads(base64.b64decode(data))
    except Exception:
        return None
    return None
