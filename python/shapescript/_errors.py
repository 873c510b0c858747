"""ShapeScript's errors as Python exceptions (docs/python.md, Errors).

Each is a `shapescript.Error` and also the builtin exception a Python user
would catch for it: a ShapeError is a ValueError, an IOError an OSError, a
WorkerError a RuntimeError. The `.ss` location and stack are the
exception's notes (shown under the traceback) and its attributes.
"""
import builtins

from . import _core


class Error(Exception):
    """Any error ShapeScript raised: `kind` ("ShapeError"), `location`
    ("train.ss:12:5", the innermost `.ss` site), `stack` (the `.ss` calls,
    most recent last) and `text` (as `ss run` prints it)."""

    kind = "Error"
    location = ""
    stack = ()
    text = ""


class CheckError(Error, builtins.TypeError):
    """The program, or a call from Python, does not check. `problems`: one
    dict per diagnostic (code, message, file, line, column, text), as
    `ss check` prints them."""

    kind = "CheckError"
    problems = ()


class ShapeError(Error, builtins.ValueError):
    """Data that does not fit its type."""

    kind = "ShapeError"


class DomainError(Error, builtins.ValueError):
    """A value outside its field's domain."""

    kind = "DomainError"


class ValueError(Error, builtins.ValueError):
    """A bad argument value (a negative learning rate, ...)."""

    kind = "ValueError"


class TypeError(Error, builtins.TypeError):
    """A value that cannot go where it was given."""

    kind = "TypeError"


class IOError(Error, builtins.OSError):
    """A file that cannot be read or written."""

    kind = "IOError"


class ImportError(Error, builtins.ImportError):
    """An extern fn's module that cannot be imported."""

    kind = "ImportError"


class MemoryError(Error, builtins.MemoryError):
    kind = "MemoryError"


class WorkerError(Error, builtins.RuntimeError):
    """A worker stopped, or the collective timeout ran out: `worker` (its
    rank), `how` ("killed by signal 9 (SIGKILL)"), `running` (the fn it was
    running) and `where` (where that fn was called). What was on the
    devices is gone."""

    kind = "WorkerError"
    worker = None
    how = ""
    running = ""
    where = ""


_core._set_error_classes({
    c.kind: c
    for c in (Error, CheckError, ShapeError, DomainError, ValueError,
              TypeError, IOError, ImportError, MemoryError, WorkerError)
})
