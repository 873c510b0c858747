#pragma once
// The AdamW step in f32 with AVX2 + FMA (Note [Vector AdamW] in
// cpu_voptim.cpp). Like cpu_vmath.h, this header includes nothing of the
// project but the loop: its one TU is compiled for AVX2 + FMA.

#include <cstdint>

namespace ss::ops::cpu::voptim {

/// Whether this CPU runs adamw_f32 (AVX2 and FMA).
bool available();

/// cpu_optim.cpp's adamw_loop on f32, eight lanes at a time.
void adamw_f32(float* p,
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

}  // namespace ss::ops::cpu::voptim
