#pragma once
// Internal to the AVX2 translation units (cpu_vmath.cpp, cpu_vrows.cpp),
// the only ones built with -mavx2 -mfma (ops/CMakeLists.txt): their shared
// vector functions. No other file may include this header: its inline
// functions hold AVX2 code, and the linker could pick one of them for a
// TU that runs on any CPU (Note [Vector transcendentals]).

#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "ops/cpu/cpu_vmath_arch.h"

namespace ss::ops::cpu::vmath::avx2 {

using Batch = xsimd::batch<float, xsimd::avx2>;
using Mask = xsimd::batch_bool<float, xsimd::avx2>;
constexpr int64_t W = Batch::size;

using varch::kHuge;
using varch::kTiny;
constexpr float kInf = __builtin_inff();

// The shared helpers of cpu_vmath_arch.h, for AVX2 (Note [Vector
// transcendentals]).
template <class F>
Batch patch(Batch x, Batch r, Mask bad, F f) {
  return varch::patch<xsimd::avx2>(x, r, bad, f);
}
inline Batch exp(Batch x) {
  return varch::exp<xsimd::avx2>(x);
}
/// The [k] < W floats at [p], the other lanes [pad].
inline Batch load_tail(const float* p, int64_t k, float pad) {
  return varch::load_tail<xsimd::avx2>(p, k, pad);
}
/// Stores the first [k] < W lanes of [v] at [p].
inline void store_tail(Batch v, float* p, int64_t k) {
  varch::store_tail<xsimd::avx2>(v, p, k);
}

}  // namespace ss::ops::cpu::vmath::avx2
