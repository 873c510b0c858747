"""Several devices from Python (the seed's `shapescript.parallel`): on a
program loaded with several devices, models and optimizers are handles on
the workers' copies.

A `RemoteModel`'s tensors stay on the workers: reading a field, `m.w1`,
copies the first worker's to Python (gathered whole under `shard params`
or `split H`), and `m.state_dict()` copies them all. A handle cannot be
changed from Python: a ShapeScript fn that takes the model as `mut`
changes it, on every worker."""
from . import _program


class RemoteModel(_program.Model):
    """A model on the workers (devices.md, "Several devices from Python")."""

    __slots__ = ()


class RemoteOptimizer(_program.Optimizer):
    """An optimizer's state on the workers."""

    __slots__ = ()


_program._REMOTE.update({
    "model": RemoteModel,
    "grads": RemoteModel,
    "optim": RemoteOptimizer,
})
