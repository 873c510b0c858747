// gelu and its VJP in f32 for AVX-512 (sixteen lanes): cpu_vgelu.h's
// loops, as cpu_vrows.cpp builds them for AVX2 (Note [Vector row
// kernels]), with xsimd's same erf, tanh and exp, chosen by cpu_fused.cpp
// where the CPU has AVX-512 F, VL and DQ (ops/CMakeLists.txt builds this
// TU alone with those). A standalone run of the erf gelu on 524k values
// took 0.51-0.55 ms with AVX2 and 0.34-0.36 ms with AVX-512; on the small
// block of bench/compare_transformer.py gelu and its VJP were 9% of the
// step.

#include "ops/cpu/cpu_vgelu.h"
#include "ops/cpu/cpu_vrows.h"

namespace ss::ops::cpu::vrows {

void gelu512(const float* x, float* y, int64_t n, bool tanh) {
  vgelu::gelu<xsimd::avx512f>(x, y, n, tanh);
}

void gelu_backward512(
    const float* g, const float* x, float* o, int64_t n, bool tanh) {
  vgelu::gelu_backward<xsimd::avx512f>(g, x, o, n, tanh);
}

}  // namespace ss::ops::cpu::vrows
