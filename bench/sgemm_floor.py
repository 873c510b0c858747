#!/usr/bin/python3
"""The sgemm floor of a train step: the time of its matrix products alone.

A step's products are work neither side can skip; run on their own with
the same BLAS and thread count, they give the least time a step can take
with that BLAS, and so the lowest ratio to PyTorch's step that ss can
reach without a faster sgemm. bench/compare_pytorch.py and
bench/compare_transformer.py report it beside each ratio.

A product is (batch, M, N, K, ta, tb): C [M N] = op(A) @ op(B), op a
transpose where ta / tb say (read in place, as both sides read them).
Timed with torch.bmm / torch.mm on preallocated tensors (out=), which call
the same OpenBLAS sgemm as ss (Debian's torch and ss link
libopenblas; OPENBLAS_CORETYPE applies to both).
"""
import ctypes
import time

import torch


def set_torch_threads(n):
    """torch.set_num_threads(n), and OpenBLAS's threads in this process too:
    Debian's torch is built with BLAS=generic, so set_num_threads leaves
    OpenBLAS at its own count (every core, with OPENBLAS_NUM_THREADS
    unset), and torch's "1 thread" ran its products on 2 threads, whose
    spinning its CPU time counted. The library is found among this
    process's mappings; without it, only torch's count is set."""
    torch.set_num_threads(n)
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libopenblas" in line}
    for path in paths:
        lib = ctypes.CDLL(path)
        lib.openblas_set_num_threads(n)
        advise_huge_pages(lib, n)


MADV_HUGEPAGE = 14


def advise_huge_pages(lib, threads):
    """What ss does at start-up (Note [OpenBLAS's packing buffers on huge
    pages], ops/cpu/cpu_blas_pages.cpp): ask for huge pages under the
    packing buffers OpenBLAS's products can draw, so that torch's products
    and the floor's run as fast as ss's. Without it, a product whose
    output has few columns ran 3x slower or not, by chance."""
    lib.blas_memory_alloc.restype = ctypes.c_void_p
    lib.blas_memory_free.argtypes = [ctypes.c_void_p]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    borrowed = [lib.blas_memory_alloc(0) for _ in range(threads + 3)]
    with open("/proc/self/maps") as f:
        spans = [tuple(int(x, 16) for x in line.split()[0].split("-"))
                 for line in f]
    for p in borrowed:
        for start, end in spans:
            if start <= p < end:
                libc.madvise(start, end - start, MADV_HUGEPAGE)
    for p in reversed(borrowed):
        lib.blas_memory_free(p)


def linear(tokens, d_in, d_out, dx=True):
    """A linear layer's products on [tokens d_in] -> [tokens d_out]: the
    forward, the weight's gradient and, with [dx], the input's."""
    g = [(1, tokens, d_out, d_in, False, False),
         (1, d_in, d_out, tokens, True, False)]
    if dx:
        g.append((1, tokens, d_in, d_out, False, True))
    return g


def attention(batch, n, dh):
    """Attention's two products q @ k^T and p @ v over [batch] heads of
    [n] queries and keys, forward and both gradients of each."""
    return [(batch, n, n, dh, False, True),   # s = q k^T
            (batch, n, dh, n, False, False),  # dq = ds k
            (batch, n, dh, n, True, False),   # dk = ds^T q
            (batch, n, dh, n, False, False),  # o = p v
            (batch, n, n, dh, False, True),   # dp = do v^T
            (batch, n, dh, n, True, False)]   # dv = p^T do


def fused_attention(batch, n, dh, causal=True, rows=32):
    """The products ss's fused attention runs (Note [Fused attention] in
    ops/cpu/cpu_attention.cpp) over [batch] heads of [n] queries and keys:
    per block of [rows] query rows, against the keys the block sees (all
    of them, or under the causal mask those up to its last row), the
    scores and the product with v forward; the scores again, dv, dp, dq
    and dk backward. The key tiles of a block are timed as one product."""
    g = []
    for i0 in range(0, n, rows):
        r = min(rows, n - i0)
        kend = min(n, i0 + r) if causal else n
        g += [(batch, r, kend, dh, False, True),   # s = q k^T
              (batch, r, dh, kend, False, False),  # o = p v
              (batch, r, kend, dh, False, True),   # s again, backward
              (batch, kend, dh, r, True, False),   # dv = p^T do
              (batch, r, kend, dh, False, True),   # dp = do v^T
              (batch, r, dh, kend, False, False),  # dq = ds k
              (batch, kend, dh, r, True, False)]   # dk = ds^T q
    return g


def _operands(gemm):
    b, m, n, k, ta, tb = gemm
    a = torch.rand(b, k, m) if ta else torch.rand(b, m, k)
    w = torch.rand(b, n, k) if tb else torch.rand(b, k, n)
    a = a.transpose(1, 2) if ta else a
    w = w.transpose(1, 2) if tb else w
    out = torch.empty(b, m, n)
    if b == 1:
        return a[0], w[0], out[0], torch.mm
    return a, w, out, torch.bmm


def time_gemms(gemms, threads, reps=7):
    """(wall seconds, CPU seconds) of one pass over [gemms] on [threads]
    threads: the least of [reps] passes after one to warm up (a floor: on
    a shared machine the other passes lost time to the load)."""
    set_torch_threads(threads)
    ops = [_operands(g) for g in gemms]
    walls, cpus = [], []
    for r in range(reps + 1):
        w0, c0 = time.perf_counter(), time.process_time()
        for a, w, out, f in ops:
            f(a, w, out=out)
        if r:
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def time_gemms_onednn(gemms, threads, reps=7):
    """(wall seconds, CPU seconds) of one pass over [gemms] as ss runs them
    (Note [f32 products on oneDNN] in ops/cpu/cpu_onednn.cpp): oneDNN's
    sgemm held to one OpenMP thread per call, a batch's matrices split over
    [threads] threads and a single matrix's rows likewise (ctypes lets go
    of the GIL during each call); the least of [reps] passes after one to
    warm up."""
    import ctypes.util
    import numpy as np
    from concurrent.futures import ThreadPoolExecutor
    dnnl = ctypes.CDLL("libdnnl.so.2")
    gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    f = dnnl.dnnl_sgemm
    f.argtypes = [ctypes.c_char, ctypes.c_char] + [ctypes.c_int64] * 3 + [
        ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
        ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]
    gomp.omp_set_num_threads(1)
    pool = ThreadPoolExecutor(threads, initializer=gomp.omp_set_num_threads,
                              initargs=(1,))
    calls = []  # per product: the calls each thread makes
    keep = []
    for b, m, n, k, ta, tb in gemms:
        a = np.random.rand(b, k, m) if ta else np.random.rand(b, m, k)
        w = np.random.rand(b, n, k) if tb else np.random.rand(b, k, n)
        a, w = a.astype(np.float32), w.astype(np.float32)
        out = np.empty((b, m, n), np.float32)
        keep += [a, w, out]
        lda, ldb = (m if ta else k), (k if tb else n)

        def one(i, r0, r1, a=a, w=w, out=out, m=m, n=n, k=k, ta=ta, tb=tb,
                lda=lda, ldb=ldb):
            pa = a[i].ctypes.data + (r0 if ta else r0 * lda) * 4
            f(b"T" if ta else b"N", b"T" if tb else b"N", r1 - r0, n, k, 1.0,
              pa, lda, w[i].ctypes.data, ldb, 0.0,
              out[i].ctypes.data + r0 * n * 4, n)
        if b >= threads:
            parts = [[(i, 0, m) for i in range(t * b // threads,
                                               (t + 1) * b // threads)]
                     for t in range(threads)]
        else:
            parts = [[(0, t * m // threads, (t + 1) * m // threads)]
                     for t in range(threads)]
        calls.append((one, parts))

    def run_part(one, part):
        for i, r0, r1 in part:
            one(i, r0, r1)
    walls, cpus = [], []
    for r in range(reps + 1):
        w0, c0 = time.perf_counter(), time.process_time()
        for one, parts in calls:
            if threads == 1:
                run_part(one, parts[0])
            else:
                list(pool.map(lambda p, one=one: run_part(one, p), parts))
        if r:
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    pool.shutdown()
    return min(walls), min(cpus)


def flops(gemms):
    """The multiply-add FLOPs of [gemms] (2 m n k per matrix)."""
    return sum(2 * b * m * n * k for b, m, n, k, _, _ in gemms)


def fma_peak(threads, binary=None):
    """The machine's f32 FLOP/s on [threads] threads, measured by
    bench/fma_peak (built with the tree): the rate no library's product
    passes. None when the binary is not built."""
    import os
    import subprocess
    binary = binary or os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "build", "bench", "fma_peak")
    if not os.path.exists(binary):
        return None
    out = subprocess.run([binary, "--threads", str(threads)], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[1]) * 1e9


def peak_floor(gemms, threads, binary=None):
    """The seconds [gemms] take at the core's FMA peak on [threads] threads:
    the least time any library can run them in, so the floor under any
    goal stated as a ratio to a step that contains them. None when
    bench/fma_peak is not built."""
    peak = fma_peak(threads, binary)
    return None if peak is None else flops(gemms) / peak
