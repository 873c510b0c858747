// Note [Vector transcendentals]
// exp, log, log1p, expm1, tanh, erf and sigmoid of f32 tensors go through
// xsimd's vector functions, eight lanes at a time, instead of libm's scalar
// expf/erff (12% of the small LM's step in bench/compare_transformer.py).
// This TU (with cpu_vrows.cpp and cpu_voptim.cpp, which share its
// approach) is compiled with -mavx2 -mfma (ops/CMakeLists.txt) and
// runs only where the CPU has both: the callers ask has_avx2_fma
// (cpu_features.h) first, in their portable TUs, and run the libm loop
// elsewhere. To keep AVX2 code out of the rest of the binary, the TU includes
// only xsimd, <cstdint> and cpu_vmath_avx2.h, which only the AVX2 TUs
// include (no other project header, whose inline functions the linker
// could pick from here), and scripts/check_layers.py's ops rules still
// hold: it is part of ops/cpu.
//
// Accuracy, measured against libm in double rounded to f32 over every
// 4096th f32 bit pattern, a dense grid over [-12, 12] and the edge cases
// (ops/tests/cpu_vmath_test.cpp, which asserts these bounds): log and
// log1p within 1 ulp, exp and tanh 1.5, expm1 2, erf and sigmoid 2.5
// (measured worst: 0.72, 0.72, 1.45, 1.21, 1.99, 2.27, 2.28); NaN, ±inf,
// ±0, overflow to inf and gradual underflow as libm. libm's own f32
// functions are within 1 ulp; a few ulps of f32 are far inside every
// tolerance the op tables use (1e-5 relative is ~80 ulp).
//
// The tail of a tensor (n not a multiple of 8) is computed in a padded
// batch, so every element gets the same function wherever it lies.

#include "ops/cpu/cpu_vmath.h"

#include "ops/cpu/cpu_vmath_avx2.h"

namespace ss::ops::cpu::vmath {

namespace {

using namespace avx2;

Batch expm1(Batch x) {
  Batch r = xsimd::expm1(x);
  return patch(x, r, x > Batch(kHuge), [](float v) { return std::expm1(v); });
}

Batch sigmoid(Batch x) {
  // Stable: exp of -|x| only, never of a large positive number.
  Batch e = exp(-xsimd::abs(x));
  Batch one(1.0f);
  Batch r = one / (one + e);
  return xsimd::select(x >= Batch(0.0f), r, e * r);
}

template <class F>
void map(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + W <= n; i += W)
    f(Batch::load_unaligned(x + i)).store_unaligned(y + i);
  if (i == n) return;
  alignas(32) float buf[W] = {};
  for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
  f(Batch::load_aligned(buf)).store_aligned(buf);
  for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
}

}  // namespace

void apply_f32(Fn fn, const float* x, float* y, int64_t n) {
  switch (fn) {
    case Fn::Exp:
      map(x, y, n, [](Batch v) { return exp(v); });
      return;
    case Fn::Log:
      map(x, y, n, [](Batch v) { return xsimd::log(v); });
      return;
    case Fn::Log1p:
      map(x, y, n, [](Batch v) { return xsimd::log1p(v); });
      return;
    case Fn::Expm1:
      map(x, y, n, [](Batch v) { return expm1(v); });
      return;
    case Fn::Tanh:
      map(x, y, n, [](Batch v) { return xsimd::tanh(v); });
      return;
    case Fn::Erf:
      map(x, y, n, [](Batch v) { return xsimd::erf(v); });
      return;
    case Fn::Sigmoid:
      map(x, y, n, sigmoid);
      return;
  }
}

}  // namespace ss::ops::cpu::vmath
