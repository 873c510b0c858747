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

namespace ss::ops::cpu::vgelu {
namespace {

constexpr float kSqrtHalf = 0.7071067811865476f;    // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
constexpr float kTanhK0 = 0.7978845608028654f;      // sqrt(2 / pi)
constexpr float kTanhK1 = 0.044715f;

template <class A>
using Batch = xsimd::batch<float, A>;

template <class A>
constexpr int64_t kW = Batch<A>::size;

/// The [k] < W floats at [p], the other lanes 0.
template <class A>
Batch<A> load_tail(const float* p, int64_t k) {
  alignas(64) float buf[kW<A>] = {};
  for (int64_t j = 0; j < k; ++j) buf[j] = p[j];
  return Batch<A>::load_aligned(buf);
}

/// As cpu_vmath_avx2.h's exp: xsimd's, with libm's where xsimd's overflows
/// early or turns subnormal (-inf stays in the vector path: 0 exactly).
template <class A>
Batch<A> exp(Batch<A> x) {
  Batch<A> r = xsimd::exp(x);
  const auto bad = (x > Batch<A>(88.0f)) |
                   ((x < Batch<A>(-87.0f)) & (x != Batch<A>(-INFINITY)));
  if (!xsimd::any(bad)) return r;
  alignas(64) float xs[kW<A>], rs[kW<A>];
  x.store_aligned(xs);
  r.store_aligned(rs);
  for (int64_t i = 0; i < kW<A>; ++i)
    if (xs[i] > 88.0f || (xs[i] < -87.0f && xs[i] != -INFINITY))
      rs[i] = std::exp(xs[i]);
  return Batch<A>::load_aligned(rs);
}

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
  alignas(64) float out[kW<A>];
  f(load_tail<A>(x + i, n - i), g ? load_tail<A>(g + i, n - i) : Batch<A>(0.0f))
      .store_aligned(out);
  for (int64_t j = 0; j < n - i; ++j) y[i + j] = out[j];
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
          v * B(kInvSqrt2Pi) * exp<A>(B(-0.5f) * v * v);
    }
    return gv * d;
  });
}

}  // namespace
}  // namespace ss::ops::cpu::vgelu
