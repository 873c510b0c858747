#pragma once
// The AdamW step in f32 with AVX2 + FMA, or AVX-512 (Note [Vector AdamW]
// in cpu_voptim.cpp). Like cpu_vmath.h, this header includes nothing of
// the project: its TUs are compiled for those instruction sets.

#include <cstdint>

#include "ops/cpu/cpu_adamw_step.h"

namespace ss::ops::cpu::voptim {

/// cpu_optim_loops.h's adamw_loop on f32.
using AdamwF32 = void(float* p,
                      const float* g,
                      float* m,
                      float* v,
                      int64_t n,
                      const AdamwStep& s);

/// Eight lanes at a time (AVX2 and FMA).
AdamwF32 adamw_f32;
/// Sixteen lanes at a time (AVX-512 F, VL and DQ; cpu_voptim512.cpp), with
/// the same bits.
AdamwF32 adamw_f32_512;

}  // namespace ss::ops::cpu::voptim
