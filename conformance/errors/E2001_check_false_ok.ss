# `spmd(check=false) fn` turns the E2001 check off, as check_vma=False
# does (spmd.md): E2001_result_varies.ss's program, with the promise left to
# the author. The checker once ignored check=false.
# expect: ok

devices cpu
mesh x=2 y=2

spmd(check=false) fn matmul_unchecked(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return a @ b
