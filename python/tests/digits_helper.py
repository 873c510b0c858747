"""Datasets written in Python for the tests (test_pydata.py): importable,
so that workers load them."""
import os

import numpy as np


class BadRows(Exception):
    pass


class Digits:
    """PyTorch's batch protocol: __getitems__ returns stacked fields. With
    [log], each call appends `pid rows...` to that file."""

    def __init__(self, img, label, log=None, fail_at=None):
        self.img, self.label, self.log, self.fail_at = img, label, log, fail_at

    def __len__(self):
        return len(self.img)

    def __getitems__(self, rows):
        if self.fail_at is not None and self.fail_at in rows:
            raise BadRows(f"row {self.fail_at} is bad")
        if self.log:
            with open(self.log, "a") as f:
                f.write(" ".join(map(str, [os.getpid()] + list(rows))) + "\n")
        return {"img": self.img[rows], "label": self.label[rows]}


class ItemDigits:
    """One item at a time (__getitem__), as a map-style torch Dataset."""

    def __init__(self, img, label):
        self.img, self.label = img, label

    def __len__(self):
        return len(self.img)

    def __getitem__(self, i):
        return {"img": self.img[i], "label": int(self.label[i])}
