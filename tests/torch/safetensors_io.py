"""safetensors by hand: python3-safetensors is not in Debian 12. The one
copy the torch tests (op_table.py, programs/) and bench/compare_pytorch.py
share.

The format: an 8-byte little-endian header length, a JSON header (each
tensor's dtype, shape and byte range; `__metadata__`: str -> str), then the
raw little-endian bytes of each tensor. Numbers round-trip exactly, which is
why tests pass their inputs this way rather than as text.
"""
import json
import struct

import numpy as np

DTYPES = {"F64": np.float64, "F32": np.float32, "I64": np.int64,
          "I32": np.int32, "BOOL": np.bool_}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def write(path, tensors, metadata=None):
    """Writes {name: numpy array} (and str metadata) to [path]."""
    header = {}
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    blobs, offset = [], 0
    for name, a in tensors.items():
        # (not np.ascontiguousarray: it makes a 0-d array 1-d)
        a = np.asarray(a)
        data = a.astype(a.dtype.newbyteorder("<")).tobytes(order="C")
        header[name] = {"dtype": NAMES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def read(path):
    """({name: numpy array}, metadata) from [path]."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    metadata = header.pop("__metadata__", {})
    body = raw[8 + n:]
    tensors = {}
    for name, e in header.items():
        lo, hi = e["data_offsets"]
        a = np.frombuffer(body[lo:hi], dtype=DTYPES[e["dtype"]])
        tensors[name] = a.reshape(e["shape"]).copy()
    return tensors, metadata
