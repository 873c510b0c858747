// Note [Vector AdamW] for AVX-512: the same loop (cpu_optim_loops.h, its
// own copy in this TU's unnamed namespace) and the same flags but the
// instruction set, sixteen lanes at a time (ops/CMakeLists.txt). Without
// FMA contraction, with sqrt and divide exact, it gives the AVX2 loop's
// and the portable loop's bits (cpu_voptim_test). On the README MLP at
// batch 64 (3,000 steps under perf) AdamW took 1,145 samples at eight
// lanes, 8% of the run, and 936 here: the loop is bound by memory more
// than by lanes.

#include "ops/cpu/cpu_optim_loops.h"
#include "ops/cpu/cpu_voptim.h"

namespace ss::ops::cpu::voptim {

void adamw_f32_512(float* p,
                   const float* g,
                   float* m,
                   float* v,
                   int64_t n,
                   const AdamwStep& s) {
  adamw_loop(p, g, m, v, n, s);
}

}  // namespace ss::ops::cpu::voptim
