// Note [Vector AdamW]
// The fused AdamW step (cpu_optim.cpp) is the one per-element pass over
// every param in a step: with a small batch (the README MLP at 64) it was
// a fifth of ss's step. This TU compiles the same loop
// (cpu_optim_loops.h) for AVX2 + FMA (ops/CMakeLists.txt), eight lanes and
// a vector sqrt and divide at a time instead of four, which measured 1.7x
// faster on 200k params; it runs only where the CPU has both. It is built
// with -ffp-contract=off: each operation rounds as written, as in the
// portable loop and in torch's update, so the vector loop gives the
// portable loop's bits (sqrt and divide are exact in both). Contracted to
// FMAs, the README MLP's 200-step trajectory (bench/compare_pytorch.py)
// drifted from torch's from step 29 on, 1.2e-2 relative by step 200:
// AdamW's normalised steps turn a last-bit change of a param into
// different near-zero gradients, and those into full-size steps.

#include "ops/cpu/cpu_voptim.h"

#include "ops/cpu/cpu_optim_loops.h"

namespace ss::ops::cpu::voptim {

void adamw_f32(float* p,
               const float* g,
               float* m,
               float* v,
               int64_t n,
               const AdamwStep& s) {
  adamw_loop(p, g, m, v, n, s);
}

}  // namespace ss::ops::cpu::voptim
