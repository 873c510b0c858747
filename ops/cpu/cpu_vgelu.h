#pragma once
// Internal to the vector TUs (cpu_vrows.cpp, built for AVX2 + FMA, and
// cpu_vgelu512.cpp, for AVX-512): gelu and its VJP over a run of f32,
// written once for any xsimd arch (Note [Vector row kernels]). Everything
// here is in an unnamed namespace, as cpu_optim_loops.h is: each TU, built
// for its own instruction set, gets its own copy, so the linker cannot
// hand the AVX-512 one to a caller on another CPU. No other file may
// include it.

#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "ops/cpu/cpu_vmath_arch.h"

namespace ss::ops::cpu::vgelu {
namespace {

constexpr float kSqrtHalf = 0.7071067811865476f;    // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
constexpr float kTanhK0 = 0.7978845608028654f;      // sqrt(2 / pi)
constexpr float kTanhK1 = 0.044715f;

using varch::Batch;
using varch::kW;

/// y[i] = f(x[i], g[i]) over [n] values, W at a time, the tail padded with
/// 0 ([g] null: 0).
template <class A, class F>
void map(const float* x, const float* g, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kW<A> <= n; i += kW<A>)
    f(Batch<A>::load_unaligned(x + i),
      g ? Batch<A>::load_unaligned(g + i) : Batch<A>(0.0f))
        .store_unaligned(y + i);
  if (i == n) return;
  varch::store_tail<A>(
      f(varch::load_tail<A>(x + i, n - i, 0.0f),
        g ? varch::load_tail<A>(g + i, n - i, 0.0f) : Batch<A>(0.0f)),
      y + i,
      n - i);
}

/// 0.5 x (1 + erf(x / sqrt 2)), or with [tanh] 0.5 x (1 + tanh(sqrt(2/pi)
/// (x + 0.044715 x^3))), as cpu_fused.cpp's portable gelu.
template <class A>
void gelu(const float* x, float* y, int64_t n, bool tanh) {
  using B = Batch<A>;
  const B half(0.5f), one(1.0f);
  map<A>(x, nullptr, y, n, [&](B v, B) {
    B t = tanh ? xsimd::tanh(B(kTanhK0) * (v + B(kTanhK1) * v * v * v))
               : xsimd::erf(v * B(kSqrtHalf));
    return half * v * (one + t);
  });
}

/// Its VJP: o = g * gelu'(x).
template <class A>
void gelu_backward(
    const float* g, const float* x, float* o, int64_t n, bool tanh) {
  using B = Batch<A>;
  const B half(0.5f), one(1.0f);
  map<A>(x, g, o, n, [&](B v, B gv) {
    B d;
    if (tanh) {
      B th = xsimd::tanh(B(kTanhK0) * (v + B(kTanhK1) * v * v * v));
      d = half * (one + th) + half * v * (one - th * th) * B(kTanhK0) *
                                  (one + B(3 * kTanhK1) * v * v);
    } else {
      d = half * (one + xsimd::erf(v * B(kSqrtHalf))) +
          v * B(kInvSqrt2Pi) * varch::exp<A>(B(-0.5f) * v * v);
    }
    return gv * d;
  });
}

}  // namespace
}  // namespace ss::ops::cpu::vgelu
