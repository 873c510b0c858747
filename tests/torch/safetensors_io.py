"""safetensors files by hand (Debian has no python3-safetensors): an 8-byte
little-endian header length, a JSON header, then the raw little-endian bytes
of each tensor. Numbers round-trip exactly, which is why the op table passes
its inputs this way rather than as text. (tests/torch/programs/ has one
with a reader, written at the same time on another branch: one of the two
should go at the merge; this one keeps 0-d arrays 0-d.)"""

import json
import struct

import numpy as np

_DTYPES = {
    np.dtype(np.float64): "F64",
    np.dtype(np.float32): "F32",
    np.dtype(np.int64): "I64",
    np.dtype(np.int32): "I32",
    np.dtype(np.bool_): "BOOL",
}


def write(path, tensors):
    """Writes {name: numpy array} to path."""
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        # (not np.ascontiguousarray: it makes a 0-d array 1-d)
        a = np.asarray(a)
        data = a.astype(a.dtype.newbyteorder("<")).tobytes(order="C")
        header[name] = {"dtype": _DTYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
