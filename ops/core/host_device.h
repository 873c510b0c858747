#pragma once
// SS_HD marks the per-element and per-row logic the CUDA kernels run, kept
// in headers that g++ also compiles: the unit tests (ops/tests/
// cuda_logic_*_test.cpp) run that logic on the host against the CPU backend
// bit for bit, so only the launch code is left for a GPU to prove.

#if defined(__CUDACC__)
#define SS_HD __host__ __device__ __forceinline__
#else
#define SS_HD inline
#endif
