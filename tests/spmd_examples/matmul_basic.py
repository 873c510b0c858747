#!/usr/bin/python3
"""Oracle for examples/spmd/matmul_basic.ss: c = a @ b for the tutorial's
a = arange(8 * 16).reshape(8, 16) and b = arange(16 * 4).reshape(16, 4),
in numpy.

Tolerance 0: every product and partial sum is an integer below 2^24, exact
in f32, so however psum orders the sums the result is the same bits.
Usage: matmul_basic.py SS_BINARY
"""
import sys

import numpy as np

import spmd_oracle as o

a = np.arange(8 * 16, dtype=np.float64).reshape(8, 16)
b = np.arange(16 * 4, dtype=np.float64).reshape(16, 4)
(got,) = o.run_example(sys.argv[1], "matmul_basic")
o.finish(o.check(got, {"out": a @ b, "max_abs_diff": 0.0}, 0.0, "matmul_basic"))
