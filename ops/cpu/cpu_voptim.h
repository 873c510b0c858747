#pragma once
// The AdamW step in f32 with AVX2 + FMA, or AVX-512 (Note [Vector AdamW]
// in cpu_voptim.cpp). Like cpu_vmath.h, this header includes nothing of
// the project: its TUs are compiled for those instruction sets.

#include <cstdint>

namespace ss::ops::cpu::voptim {

/// cpu_optim.cpp's adamw_loop on f32: (p, g, m, v, n, lr, b1, b2, eps,
/// wd, step).
using AdamwF32 = void(float* p,
                      const float* g,
                      float* m,
                      float* v,
                      int64_t n,
                      double lr,
                      double b1,
                      double b2,
                      double eps,
                      double wd,
                      int64_t step);

/// Eight lanes at a time (AVX2 and FMA).
AdamwF32 adamw_f32;
/// Sixteen lanes at a time (AVX-512 F, VL and DQ; cpu_voptim512.cpp), with
/// the same bits.
AdamwF32 adamw_f32_512;

}  // namespace ss::ops::cpu::voptim
