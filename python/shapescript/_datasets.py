"""Datasets written in Python (docs/python.md, Datasets): an object with
`__len__` and `__getitems__(indices)` (PyTorch's protocol: a dict of
stacked fields, each [n ...], checked as a whole batch) or
`__getitem__(i)` (a dict of one item's fields, stacked here)."""
import base64
import pickle

import numpy as np


def load(obj, rows):
    """Items [rows] of [obj]: a dict of stacked fields."""
    rows = [int(r) for r in rows]
    if hasattr(obj, "__getitems__"):
        got = obj.__getitems__(rows)
        if isinstance(got, dict):
            return got
        items = list(got)
    else:
        items = [obj[r] for r in rows]
    if not items:
        return {}
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise TypeError(f"item {rows[i]} is a {type(it).__name__}: a "
                            f"dataset's item is a dict of its fields")
    return {k: np.stack([np.asarray(it[k]) for it in items])
            for k in items[0]}


def payload(obj):
    """What makes [obj] again in a worker: its pickle; "" when its class is
    in the main script (never imported by a worker) or it cannot be
    pickled."""
    if type(obj).__module__ == "__main__":
        return ""
    try:
        return base64.b64encode(pickle.dumps(obj)).decode()
    except Exception:
        return ""


def from_payload(text):
    return pickle.loads(base64.b64decode(text))
