#!/usr/bin/python3
"""Writes the seed corpus of the fuzz targets, tests/fuzz/corpus/<target>/
(README.md): valid files of each format as numpy and torch write them, and
the hostile inputs of issue 16, kept small (bombs as small compressed
files). The check target's seeds also include examples/ and conformance/,
read where they are (targets.def). Deterministic: rerunning it rewrites
the same files. Regression inputs that fuzzing found
live beside them as regress_*, written by hand, and this script leaves
them alone.

    /usr/bin/python3 tests/fuzz/make_corpus.py
"""
import gzip
import io
import json
import os
import shutil
import struct
import sys
import zipfile
import zlib

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "torch"))
import safetensors_io  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")
rng = np.random.default_rng(16)


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def clear(target):
    d = os.path.join(CORPUS, target)
    if os.path.isdir(d):
        for f in os.listdir(d):
            if not f.startswith("regress_"):
                os.remove(os.path.join(d, f))


# ------------------------------------------------------------------ check

def check_corpus():
    clear("check")
    head = "dim D = 4\n\nfn main():\n    let a = 1\n"
    hostile = {
        # issue 16 item 4: deep and long constructs
        "unclosed_parens": head + "    print(" + "(" * 10000 + "\n",
        "deep_parens": head + "    print(" + "(" * 3000 + "a" + ")" * 3000 + ")\n",
        "long_sum": head + "    print(" + " + ".join(["a"] * 8000) + ")\n",
        "long_list": head + "    print([" + ", ".join(["1"] * 8000) + "])\n",
        "deep_unary": head + "    print(" + "-" * 5000 + "a)\n",
        "deep_lists": head + "    print(" + "[" * 3000 + "1" + "]" * 3000 + ")\n",
        "deep_calls": head + "    print(" + "f(" * 3000 + "a" + ")" * 3000 + ")\n",
        "deep_blocks": "fn main():\n" + "".join(
            "    " * (i + 1) + "if true:\n" for i in range(120)) +
            "    " * 121 + "print(1)\n",
        "recursion": "fn f(n: int) -> int:\n    if n == 0:\n        return 0\n"
                     "    return f(n - 1) + 1\n\nfn main():\n    print(f(1600))\n",
        "long_fn_chain": "".join(f"fn f{i}(x: int) -> int:\n    return f{i + 1}(x)\n\n"
                                 for i in range(500)) +
                         "fn f500(x: int) -> int:\n    return x\n\nfn main():\n    print(f0(1))\n",
        # issue 16 items 3 and 5: int edges, huge dims
        "int_edges": head + "    print((-9223372036854775807 - 1) // -1)\n"
                     "    print(9007199254740993 - 9007199254740992)\n"
                     "    print(9223372036854775807 + 1)\n"
                     "    print(-9223372036854775808 % -1)\n"
                     "    print(99999999999999999999999)\n"
                     "    print(1e999, -1e-999, 0x7fffffffffffffff)\n",
        "huge_dim": "dim D = 784784784\ndim E = 4611686018427387904\n"
                    "model M:\n    w: [D E] = normal(std=1.0)\n\n"
                    "fn main():\n    let m = M.init(seed=0)\n    print(m.w)\n",
        "shape_overflow": "dim A = 4294967296\ndim B = 4294967296\n"
                          "fn main():\n    print(zeros([A B A]))\n",
        "negative_dim": "dim D = -1\ndim E = 0\nfn main():\n    print(zeros([D E]))\n",
        # the lexer's edges
        "unterminated_string": head + '    print("abc\n',
        "unterminated_fstring": head + '    print(f"{a\n',
        "nested_fstring": head + '    print(f"{f"{f"{a}"}"}")\n',
        "bad_utf8": (head + "    print(\"\xff\xfe\")\n").encode("latin-1"),
        "nul_bytes": (head + "    print(a)\0\0\n").encode(),
        "tabs_and_spaces": "fn main():\n\tlet a = 1\n        print(a)\n",
        "dedent_mismatch": "fn main():\n        let a = 1\n    print(a)\n",
        "crlf": head.replace("\n", "\r\n") + "    print(a)\r\n",
        "long_name": head + "    let " + "x" * 5000 + " = 1\n",
        "many_decls": "".join(f"dim D{i} = {i + 1}\n" for i in range(1000)) +
                      "fn main():\n    print(1)\n",
        "import_self": 'import "fuzz.ss"\nfn main():\n    print(1)\n',
        "import_missing": 'import "nowhere/else.ss"\nfn main():\n    print(1)\n',
        "pattern_edges": "fn f(x: [a b c]) -> [a (b c)]:\n"
                         "    return rearrange(x, a b c -> a (b c))\n"
                         "fn g(x: [a b]) -> [b a]:\n"
                         "    return einsum(x, a b -> b a ((((((\n",
        "empty": "",
        "only_newlines": "\n" * 1000,
    }
    for k, v in hostile.items():
        put("check", "hostile_" + k + ".ss", v)


# ------------------------------------------------------------ safetensors

def st_raw(header, body=b"", n=None):
    """A safetensors file from a header (dict or raw bytes) and data."""
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if n is None else n) + h + body


def st_path(name, tensors, metadata=None):
    p = os.path.join("/tmp", "ss_make_corpus_" + name)
    safetensors_io.write(p, tensors, metadata)
    data = open(p, "rb").read()
    os.remove(p)
    return data


def safetensors_corpus():
    clear("safetensors")
    x = rng.random((6, 4), dtype=np.float32)
    y = rng.integers(0, 10, 6)
    put("safetensors", "vec.safetensors", st_path("a", {"x": x, "y": y}))
    put("safetensors", "vec_f64_i32.safetensors",
        st_path("b", {"x": x.astype(np.float64), "y": y.astype(np.int32)},
                {"format": "pt"}))
    tokens = rng.integers(0, 100, (5, 7))
    put("safetensors", "seq.safetensors", st_path(
        "c", {"tokens": tokens, "tokens_lengths": np.array([7, 3, 0, 5, 1]),
              "y": rng.integers(0, 5, 5)}))
    # A checkpoint as `save` writes one: params, optimizer state, metadata.
    w = torch.randn(4, 3)
    put("safetensors", "checkpoint.safetensors", st_path(
        "d", {"m.w1": w.numpy(), "opt.exp_avg.w1": np.zeros((4, 3), np.float32),
              "opt.exp_avg_sq.w1": np.zeros((4, 3), np.float32)},
        {"optimizer": "adamw", "lr": "0.001", "betas": "[0.9, 0.999]",
         "eps": "1e-08", "weight_decay": "0.01", "step": "3"}))
    # bf16 / f16 / bool, as torch holds them (bytes by hand: numpy has no bf16)
    xb = torch.tensor(x).to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    xh = x.astype(np.float16).tobytes()
    yb = (y % 2).astype(np.bool_).tobytes()
    put("safetensors", "dtypes.safetensors", st_raw(
        {"x": {"dtype": "BF16", "shape": [6, 4], "data_offsets": [0, 48]},
         "h": {"dtype": "F16", "shape": [6, 4], "data_offsets": [48, 96]},
         "y": {"dtype": "BOOL", "shape": [6], "data_offsets": [96, 102]}},
        xb + xh + yb))
    put("safetensors", "scalar_and_empty.safetensors", st_raw(
        {"s": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]},
         "x": {"dtype": "F32", "shape": [0, 4], "data_offsets": [4, 4]},
         "y": {"dtype": "I64", "shape": [0], "data_offsets": [4, 4]}},
        b"\0\0\x80\x3f"))
    ok = {"x": {"dtype": "F32", "shape": [1, 4], "data_offsets": [0, 16]}}
    # issue 16 items 1 and 2: deep metadata, many keys, huge headers
    deep = b'{"__metadata__": {"a": ' + b"[" * 30000 + b"]" * 30000 + b"}}"
    put("safetensors", "hostile_deep_metadata.safetensors", st_raw(deep))
    deep_obj = b'{"__metadata__": ' + b'{"a":' * 3000 + b'"x"' + b"}" * 3000 + b"}"
    put("safetensors", "hostile_deep_objects.safetensors", st_raw(deep_obj))
    many = {"__metadata__": {f"k{i}": "v" for i in range(4000)}}
    many.update(ok)
    put("safetensors", "hostile_many_keys.safetensors",
        st_raw(many, bytes(16)))
    many_t = {f"t{i}": {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]}
              for i in range(1000)}
    put("safetensors", "hostile_many_tensors.safetensors",
        st_raw(many_t, bytes(1000)))
    put("safetensors", "hostile_header_len_100mb.safetensors",
        st_raw(ok, bytes(16), n=100 * 1000 * 1000))
    put("safetensors", "hostile_header_len_max.safetensors",
        st_raw(ok, bytes(16), n=2**64 - 1))
    put("safetensors", "hostile_header_len_zero.safetensors", st_raw(b"", b"", 0))
    put("safetensors", "hostile_short.safetensors", b"\x10\0\0")
    put("safetensors", "hostile_duplicate_keys.safetensors", st_raw(
        b'{"x": {"dtype": "F32", "shape": [1, 4], "data_offsets": [0, 16]},'
        b' "x": {"dtype": "F32", "shape": [1, 4], "data_offsets": [0, 16]}}',
        bytes(16)))
    for name, entry in {
        "offsets_past_end": {"dtype": "F32", "shape": [1, 4], "data_offsets": [0, 1 << 40]},
        "offsets_reversed": {"dtype": "F32", "shape": [1, 4], "data_offsets": [16, 0]},
        "offsets_wrong_size": {"dtype": "F32", "shape": [1, 4], "data_offsets": [0, 12]},
        "shape_overflow": {"dtype": "F32", "shape": [2**62, 2**62], "data_offsets": [0, 16]},
        "shape_negative": {"dtype": "F32", "shape": [-1, -16], "data_offsets": [0, 16]},
        "shape_float": {"dtype": "F32", "shape": [1.5, 4], "data_offsets": [0, 16]},
        "shape_huge_int": {"dtype": "F32", "shape": [1, 4], "data_offsets": [0, 10**30]},
        "dtype_unknown": {"dtype": "F8_E4M3", "shape": [1, 4], "data_offsets": [0, 4]},
        "dtype_missing": {"shape": [1, 4], "data_offsets": [0, 16]},
    }.items():
        put("safetensors", f"hostile_{name}.safetensors",
            st_raw({"x": entry, "y": {"dtype": "I64", "shape": [1],
                                      "data_offsets": [16, 24]}}, bytes(24)))
    put("safetensors", "hostile_overlapping.safetensors", st_raw(
        {"x": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]},
         "y": {"dtype": "I64", "shape": [2], "data_offsets": [16, 32]}}, bytes(32)))
    put("safetensors", "hostile_not_json.safetensors", st_raw(b'{"x": [1, 2,, }'))
    put("safetensors", "hostile_bad_utf8.safetensors",
        st_raw(b'{"\xff\xfe": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', bytes(4)))
    put("safetensors", "hostile_escapes.safetensors",
        st_raw(b'{"\\ud800\\u0000x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},'
               b' "__metadata__": {"a": "\\uDFFF\\n\\"", "b": 1}}', bytes(4)))
    put("safetensors", "hostile_lengths_bad.safetensors", st_raw(
        {"tokens": {"dtype": "I64", "shape": [2, 3], "data_offsets": [0, 48]},
         "tokens_lengths": {"dtype": "I64", "shape": [2], "data_offsets": [48, 64]},
         "y": {"dtype": "I64", "shape": [2], "data_offsets": [64, 80]}},
        np.array([1, 2, 3, 4, 5, 6, 9, -1, 0, 0], np.int64).tobytes()))
    put("safetensors", "hostile_nan_in_domain.safetensors", st_path(
        "e", {"x": np.full((2, 4), np.nan, np.float32), "y": np.array([11, -1])}))


# -------------------------------------------------------------------- npy

def npy_bytes(a, version=None):
    f = io.BytesIO()
    if version is None:
        np.save(f, a)
    else:
        np.lib.format.write_array(f, a, version=version)
    return f.getvalue()


def npy_raw(header, data=b"", version=1, hlen=None):
    h = header.encode() if isinstance(header, str) else header
    if version == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h) if hlen is None else hlen)
    else:
        pre = b"\x93NUMPY" + bytes([version, 0]) + struct.pack(
            "<I", len(h) if hlen is None else hlen)
    return pre + h + data


def npy_corpus():
    clear("npy")
    x = rng.random((5, 4), dtype=np.float32)
    put("npy", "f32.npy", npy_bytes(x))
    put("npy", "f64.npy", npy_bytes(x.astype(np.float64)))
    put("npy", "f16.npy", npy_bytes(x.astype(np.float16)))
    put("npy", "fortran.npy", npy_bytes(np.asfortranarray(x)))
    put("npy", "big_endian.npy", npy_bytes(x.astype(">f4")))
    put("npy", "v2.npy", npy_bytes(x, version=(2, 0)))
    put("npy", "v3.npy", npy_bytes(x, version=(3, 0)))
    put("npy", "tokens_i64.npy", npy_bytes(rng.integers(0, 50, (4, 6))))
    put("npy", "tokens_i32.npy", npy_bytes(rng.integers(0, 50, (4, 6)).astype(np.int32)))
    put("npy", "u8.npy", npy_bytes(rng.integers(0, 255, (3, 4)).astype(np.uint8)))
    put("npy", "u64_big.npy", npy_bytes(np.array([[2**64 - 1, 0, 1, 2]], np.uint64)))
    put("npy", "bool.npy", npy_bytes(np.array([[True, False, True, True]])))
    put("npy", "scalar.npy", npy_bytes(np.float32(3.0)))
    put("npy", "empty.npy", npy_bytes(np.zeros((0, 4), np.float32)))
    put("npy", "torch_f32.npy", npy_bytes(torch.randn(3, 4).numpy()))
    put("npy", "nan_inf.npy", npy_bytes(np.array([[np.nan, np.inf, -np.inf, 0]], np.float32)))
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
    for name, hdr in {
        "shape_overflow": d % "(4611686018427387904, 4611686018427387904)",
        "shape_huge": d % "(1000000000000, 4)",
        "shape_negative": d % "(-1, 4)",
        "shape_nested": d % "((1, 2), 4)",
        "shape_long": d % ("(" + "1, " * 2000 + ")"),
        "descr_object": "{'descr': '|O', 'fortran_order': False, 'shape': (1, 4), }",
        "descr_struct": "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1, 4), }",
        "descr_unicode": "{'descr': '<U3', 'fortran_order': False, 'shape': (1, 4), }",
        "no_descr": "{'fortran_order': False, 'shape': (1, 4), }",
        "not_a_dict": "[1, 2, 3]",
        "unterminated": "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4",
        "deep_nesting": "{'descr': '<f4', 'x': " + "(" * 5000 + ")" * 5000 + "}",
        "bad_bytes": "{'descr': '<f4\xff\x00', 'shape': (1, 4), }",
    }.items():
        put("npy", f"hostile_{name}.npy", npy_raw(hdr + "\n", bytes(16)))
    good = d % "(1, 4)" + "\n"
    put("npy", "hostile_header_len_past_end.npy", npy_raw(good, bytes(16), hlen=60000))
    put("npy", "hostile_header_len_v2_max.npy", npy_raw(good, bytes(16), version=2, hlen=2**32 - 1))
    put("npy", "hostile_truncated_data.npy", npy_bytes(x)[:-7])
    put("npy", "hostile_version_9.npy", npy_raw(good, bytes(16), version=9))
    put("npy", "hostile_magic_only.npy", b"\x93NUMPY")


# -------------------------------------------------------------------- npz

def npz_bytes(arrays, compressed):
    f = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(f, **arrays)
    return f.getvalue()


def npz_corpus():
    clear("npz")
    x = rng.random((6, 4), dtype=np.float32)
    y = rng.integers(0, 10, 6)
    put("npz", "vec.npz", npz_bytes({"x": x, "y": y}, False))
    put("npz", "vec_compressed.npz", npz_bytes({"x": x, "y": y}, True))
    put("npz", "seq.npz", npz_bytes({
        "tokens": rng.integers(0, 9, (4, 5)), "tokens_lengths": np.array([5, 2, 0, 4]),
        "y": rng.integers(0, 9, 4)}, True))
    put("npz", "dtypes.npz", npz_bytes({"x": x.astype(np.float16),
                                       "y": y.astype(np.uint8)}, False))
    # issue 16 item 7: members that overlap (one deflate stream named by
    # several central-directory entries, Fifield's non-recursive bomb, in
    # small) and a member that inflates past what it declares.
    big = npy_bytes(np.zeros((1, 4), np.float32)) + bytes(2 * 1000 * 1000)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = comp.compress(big) + comp.flush()
    crc = zlib.crc32(big)
    def local(name, method, csize, usize, crc_):
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0,
                           crc_, csize, usize, len(name), 0) + name
    def central(name, method, csize, usize, crc_, at):
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method,
                           0, 0, crc_, csize, usize, len(name), 0, 0, 0, 0, 0,
                           at) + name
    def eocd(n, cd_size, cd_at):
        return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_at, 0)
    lh = local(b"x.npy", 8, len(body), len(big), crc)
    data = lh + body
    cd = b"".join(central(n, 8, len(body), len(big), crc, 0)
                  for n in (b"x.npy", b"y.npy", b"z.npy", b"w.npy"))
    put("npz", "hostile_overlapping_members.npz",
        data + cd + eocd(4, len(cd), len(data)))
    # declares 80 uncompressed bytes, inflates to 2 MB
    lh = local(b"x.npy", 8, len(body), 80, crc)
    cd = central(b"x.npy", 8, len(body), 80, crc, 0)
    put("npz", "hostile_inflates_past_declared.npz",
        lh + body + cd + eocd(1, len(cd), len(lh) + len(body)))
    good = npz_bytes({"x": x, "y": y}, False)
    put("npz", "hostile_truncated.npz", good[:len(good) // 2])
    put("npz", "hostile_no_eocd.npz", good[:-22])
    bad_cd = bytearray(good)
    struct.pack_into("<I", bad_cd, len(good) - 6, 2**32 - 1)  # cd offset
    put("npz", "hostile_cd_offset.npz", bytes(bad_cd))
    many = bytearray(good)
    struct.pack_into("<HH", many, len(good) - 14, 65535, 65535)  # entry counts
    put("npz", "hostile_entry_count.npz", bytes(many))
    # an unknown method (bzip2), an encrypted flag, a zip64 marker
    raw = npy_bytes(x)
    for name, method, flags, size in (("bzip2", 12, 0, len(raw)),
                                      ("encrypted", 0, 1, len(raw)),
                                      ("zip64", 0, 0, 0xFFFFFFFF)):
        lh = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0,
                         zlib.crc32(raw), size, size, 5, 0) + b"x.npy"
        cd = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, flags, method,
                         0, 0, zlib.crc32(raw), size, size, 5, 0, 0, 0, 0, 0,
                         0) + b"x.npy"
        put("npz", f"hostile_{name}.npz",
            lh + raw + cd + eocd(1, len(cd), len(lh) + len(raw)))
    bad_crc = bytearray(npz_bytes({"x": x, "y": y}, False))
    bad_crc[100] ^= 0xFF
    put("npz", "hostile_bad_crc.npz", bytes(bad_crc))
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("../../x.npy", npy_bytes(x))
        z.writestr("y.npy", b"not an npy")
    put("npz", "hostile_odd_members.npz", f.getvalue())


# -------------------------------------------------------------------- idx

def idx_bytes(type_code, dims, data):
    return bytes([0, 0, type_code, len(dims)]) + b"".join(
        struct.pack(">I", d) for d in dims) + data


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def idx_corpus():
    clear("idx")
    imgs = rng.integers(0, 256, (2, 2, 2)).astype(np.uint8)
    put("idx", "images_2x2.idx", idx_bytes(8, [2, 2, 2], imgs.tobytes()))
    put("idx", "labels_2.idx", idx_bytes(8, [2], bytes([3, 7])))
    put("idx", "images_2x2.idx.gz", gz(idx_bytes(8, [2, 2, 2], imgs.tobytes())))
    put("idx", "labels_2.idx.gz", gz(idx_bytes(8, [2], bytes([3, 7]))))
    mnist = rng.integers(0, 256, (3, 28, 28)).astype(np.uint8)
    put("idx", "images_28x28.idx.gz", gz(idx_bytes(8, [3, 28, 28], mnist.tobytes())))
    put("idx", "f32_be.idx", idx_bytes(0x0D, [2, 4], np.arange(8, dtype=">f4").tobytes()))
    put("idx", "f64_be.idx", idx_bytes(0x0E, [2, 2], np.arange(4, dtype=">f8").tobytes()))
    put("idx", "i32_be.idx", idx_bytes(0x0C, [2], np.array([3, -7], ">i4").tobytes()))
    put("idx", "i16_be.idx", idx_bytes(0x0B, [2], np.array([3, 9], ">i2").tobytes()))
    # issue 16 item 7: a .gz that declares 10 images but inflates to 8 MB
    put("idx", "hostile_gz_bomb.idx.gz",
        gz(idx_bytes(8, [10, 28, 28], bytes(8 * 1000 * 1000))))
    # declares 2^32-1 images: more than its compressed size can hold
    put("idx", "hostile_gz_declares_huge.idx.gz",
        gz(idx_bytes(8, [0xFFFFFFFF, 28, 28], bytes(1000))))
    put("idx", "hostile_shape_overflow.idx",
        idx_bytes(0x0E, [0xFFFFFFFF] * 8, bytes(64)))
    put("idx", "hostile_rank_0.idx", idx_bytes(8, [], b""))
    put("idx", "hostile_rank_255.idx", bytes([0, 0, 8, 255]) + bytes(64))
    put("idx", "hostile_bad_type.idx", idx_bytes(0x42, [2], bytes(2)))
    put("idx", "hostile_truncated.idx", idx_bytes(8, [2, 2, 2], bytes(5)))
    put("idx", "hostile_zero_images.idx", idx_bytes(8, [0, 2, 2], b""))
    put("idx", "hostile_zero_width.idx", idx_bytes(8, [5, 0, 2], b""))
    whole = gz(idx_bytes(8, [2, 2, 2], imgs.tobytes()))
    put("idx", "hostile_gz_truncated.idx.gz", whole[:len(whole) - 9])
    put("idx", "hostile_gz_trailing.idx.gz", whole + b"garbage")
    put("idx", "hostile_gz_two_members.idx.gz",
        gz(idx_bytes(8, [2, 2, 2], imgs.tobytes())[:10]) +
        gz(idx_bytes(8, [2, 2, 2], imgs.tobytes())[10:]))
    bad = bytearray(whole)
    bad[-8] ^= 0xFF  # the CRC
    put("idx", "hostile_gz_bad_crc.idx.gz", bytes(bad))


# -------------------------------------------------------------------- csv

def csv_corpus():
    clear("csv")
    rows = ["x_0,x_1,x_2,x_3,y"]
    for i in range(6):
        rows.append(",".join(f"{v:.6g}" for v in rng.random(4)) + f",{i % 10}")
    put("csv", "vec.csv", "\n".join(rows) + "\n")
    put("csv", "vec_crlf_quoted.csv",
        '"x_0", "x_1" ,x_2,x_3,"y"\r\n"0.5",1e-3, -2 ,+3.25,"7"\r\n\r\n')
    put("csv", "vec_columns_reordered.csv",
        "y,x_3,x_2,x_1,x_0,extra\n1,0,0,0,0,hello\n2,1,1,1,1,world\n")
    put("csv", "mixed.csv",
        "a,b,c,d_0,d_1\n1.5,true,-5,1e300,-0.0\n65504,false,4,nan,inf\n"
        "0.0001,1,0,1,2\n")
    put("csv", "header_only.csv", "x_0,x_1,x_2,x_3,y\n")
    # issue 16 item 7: a huge row; int and float edges
    put("csv", "hostile_huge_row.csv",
        "x_0,x_1,x_2,x_3,y\n1,2,3,4,5\n" + "0," * 20000 + "0\n")
    put("csv", "hostile_wide_header.csv",
        ",".join(f"c{i}" for i in range(5000)) + "\n1\n")
    put("csv", "hostile_int_edges.csv",
        "x_0,x_1,x_2,x_3,y\n0,0,0,0,9223372036854775807\n"
        "0,0,0,0,9223372036854775808\n0,0,0,0,-9223372036854775809\n"
        "0,0,0,0,99999999999999999999999999\n0,0,0,0,1.5\n0,0,0,0,0x10\n")
    put("csv", "hostile_float_edges.csv",
        "x_0,x_1,x_2,x_3,y\n1e309,-1e309,1e-400,nan,1\n"
        "inf,-inf,+-1,1e,2\n0x1p3,1_000,,3,3\n")
    put("csv", "hostile_mixed_edges.csv",
        "a,b,c,d_0,d_1\n70000,2,2147483648,1,1\n1,True,-2147483649,1,1\n"
        "1,yes,5,1,1\n")
    put("csv", "hostile_ragged.csv",
        "x_0,x_1,x_2,x_3,y\n1,2,3\n1,2,3,4,5,6\n")
    put("csv", "hostile_quotes.csv",
        'x_0,x_1,x_2,x_3,y\n"1,2",3,4,5,6\n"""",1,2,3,4\n"\n')
    put("csv", "hostile_duplicate_columns.csv", "x_0,x_0,x_1,x_2,x_3,y\n1,1,2,3,4,5\n")
    put("csv", "hostile_nul_bytes.csv", "x_0,x_1,x_2,x_3,y\n1\0,2,3,4,5\n")
    put("csv", "hostile_only_newlines.csv", "\n" * 5000)
    put("csv", "hostile_no_newline.csv", "x_0,x_1,x_2,x_3,y")


def main():
    check_corpus()
    safetensors_corpus()
    npy_corpus()
    npz_corpus()
    idx_corpus()
    csv_corpus()
    total = 0
    for dp, _, fs in os.walk(CORPUS):
        total += sum(os.path.getsize(os.path.join(dp, f)) for f in fs)
    print(f"make_corpus: {total / 1024:.0f} KiB in {CORPUS}")


if __name__ == "__main__":
    main()
