"""Running a generated .ss program with `ss run`, and comparing what it
writes with torch's values (the tolerances: Note [Tolerances] in
op_table.py)."""

import json
import os
import subprocess
import tempfile

import numpy as np

from safetensors_io import write as write_safetensors


def run_ss(ss, src, arrays):
    """Runs [src] with in.safetensors holding [arrays] in a scratch folder:
    (every line of out.jsonl, stdout), or an error message."""
    with tempfile.TemporaryDirectory(prefix="ss_op_") as d:
        write_safetensors(os.path.join(d, "in.safetensors"), arrays)
        with open(os.path.join(d, "prog.ss"), "w") as f:
            f.write(src)
        # op_table.py --devices (the device check's cuda[0]: the same
        # rows, the same torch oracle, on a GPU).
        devices = os.environ.get("SS_OP_TABLE_DEVICES")
        args = [ss, "run", "prog.ss"] + (["--devices", devices] if devices
                                         else [])
        p = subprocess.run(args, cwd=d, capture_output=True, text=True,
                           timeout=60)
        if p.returncode != 0:
            return (f"ss run exited {p.returncode}:\n{p.stderr.strip()}\n"
                    f"--- prog.ss\n{src}")
        with open(os.path.join(d, "out.jsonl")) as f:
            return [read_jsonl_line(line) for line in f], p.stdout


def compare(what, a, t, rtol):
    """None, or what differs between ss's [a] and torch's tensor [t]: within
    rtol for floats, exactly for ints and bools."""
    t = t.detach()
    e = close(a, t.numpy(), rtol) if t.is_floating_point() else exact(
        a, t.numpy())
    return f"{what}: {e}" if e else None


def read_jsonl_line(line):
    """One jsonl line (non-finite numbers are NaN, Infinity and -Infinity,
    which Python's json reads)."""
    return json.loads(line)


def as_logged(a, dtype):
    """[a] as the dtype it was logged in: the sink writes an f32, f16 or
    bf16 element as the shortest text that reads back to the same f32
    (Note [JSON numbers] in interp/builtins/output.cpp), so it is rounded
    to f32 here, exactly recovering the value."""
    a = np.asarray(a, dtype=np.float64)
    if dtype in ("f32", "f16", "bf16"):
        a = a.astype(np.float32).astype(np.float64)
    return a


def runtime_dtypes(stdout):
    """{name: dtype} from the "rt:<name> <value>" prints of a row: a printed
    tensor's header is "[3 4] f64" (f32 too) or, for a 0-d one, "f64 15"."""
    found = {}
    for line in stdout.splitlines():
        if not line.startswith("rt:") or " " not in line:
            continue
        key, text = line[3:].split(" ", 1)
        if text.startswith("["):
            text = text[text.index("]") + 1:]
        words = text.split()
        found[key] = words[0] if words else "?"
    return found


def dtype_of(typeof):
    """The dtype in `typeof`'s text: "[A B] f64", "[A B]" (f32 is left
    out), "f64" (0-d), "int" (a host int)."""
    text = typeof.strip()
    if text.endswith("]"):
        return "f32"
    return text.split()[-1] if text else "?"


def close(a, b, rtol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"shape {list(a.shape)}, torch {list(b.shape)}"
    if a.size == 0:
        return None
    rms = float(np.sqrt(np.mean(b * b))) if np.all(np.isfinite(b)) else 0.0
    bound = rtol * (np.abs(b) + rms)
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        # A NaN agrees with torch's NaN only (rows of NaN inputs).
        same = (a == b) | (np.abs(a - b) <= bound) | (np.isnan(a) & np.isnan(b))
    if np.all(same):
        return None
    k = np.unravel_index(int(np.argmax(~same)), a.shape) if a.ndim else ()
    err = np.nanmax(np.abs(a - b) / np.maximum(np.abs(b) + rms, 1e-300))
    return (f"at {list(k)}: {a[k]!r} vs torch {b[k]!r} "
            f"(worst error {err:.3g} x scale, rtol {rtol:g})")


def exact(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"shape {list(a.shape)}, torch {list(b.shape)}"
    bad = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    if not np.any(bad):
        return None
    k = np.unravel_index(int(np.argmax(bad)), a.shape) if a.ndim else ()
    return f"at {list(k)}: {a[k]!r} vs torch {b[k]!r} (exact)"


