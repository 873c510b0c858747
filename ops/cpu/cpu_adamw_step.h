#pragma once
// One AdamW step's settings, as the f32/f64 loops take them
// (cpu_optim_loops.h, and cpu_voptim*.cpp's vector builds of it). A plain
// struct with no code: the vector TUs may include it (Note [Vector AdamW]).

#include <cstdint>

namespace ss::ops::cpu {

/// torch.optim.AdamW's lr, betas, eps and weight_decay, and the step's
/// number (from 1: bias corrections).
struct AdamwStep {
  double lr, b1, b2, eps, wd;
  int64_t step;
};

}  // namespace ss::ops::cpu
