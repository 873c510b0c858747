#!/usr/bin/python3
"""Oracle for the six matmuls of the tutorial's "Matrix multiplies" section
(examples/spmd/matmul_allgather*.ss, matmul_psumscatter*.ss): each computes
lhs @ rhs for lhs = ramp(arange(64), 3).reshape(8, 8) and rhs =
ramp(arange(32), 5).reshape(8, 4) (data.ss), whatever its collectives, so
one numpy product is the oracle of all six.

Tolerance 0: the data are multiples of 1/4 of magnitude <= 1.25, so every
product is a multiple of 1/16 and every partial sum of at most 8 of them
is below 2^4, exact in f32: any order of the sums across the instances
gives the same bits.
Usage: matmul.py SS_BINARY NAME
"""
import sys

import spmd_oracle as o

name = sys.argv[2]
lhs = o.ramp(64, 3).reshape(8, 8)
rhs = o.ramp(32, 5).reshape(8, 4)
(got,) = o.run_example(sys.argv[1], name)
o.finish(o.check(got, {"out": lhs @ rhs, "max_abs_diff": 0.0}, 0.0, name))
