#pragma once
// The AdamW step in f32 with AVX2 + FMA, or AVX-512 (Note [Vector AdamW]
// in cpu_voptim.cpp). Like cpu_vmath.h, this header includes nothing of
// the project: its TUs are compiled for those instruction sets.

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

/// Whether this CPU runs adamw_f32_512 (AVX-512 F, VL and DQ).
bool available512();

/// The same, sixteen lanes at a time, with the same bits
/// (cpu_voptim512.cpp).
void adamw_f32_512(float* p,
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
