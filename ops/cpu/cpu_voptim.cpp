// Note [Vector AdamW]
// The fused AdamW step (cpu_optim.cpp) is the one per-element pass over
// every param in a step: with a small batch (the README MLP at 64) it was
// a fifth of ss's step. This TU compiles the same loop
// (cpu_optim_loops.h) for AVX2 + FMA (ops/CMakeLists.txt), eight lanes and
// a vector sqrt and divide at a time instead of four, which measured 1.7x
// faster on 200k params; it runs only where the CPU has both. FMA
// contracts a * b + c, so the f32 result can differ from the portable
// loop's by an ulp: both are torch's update rule in f32 (the torch program
// tests compare the trajectories with tolerances).

#include "ops/cpu/cpu_voptim.h"

#include "ops/cpu/cpu_optim_loops.h"

namespace ss::ops::cpu::voptim {

bool available() {
  static const bool ok =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

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
               int64_t step) {
  adamw_loop(p, g, m, v, n, lr, b1, b2, eps, wd, step);
}

}  // namespace ss::ops::cpu::voptim
